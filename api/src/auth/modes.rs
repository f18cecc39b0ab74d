//! The two fixed authorization modes (R-ACC-159..161): `AlwaysAllow` allows every request,
//! `AlwaysDeny` denies every request, whoever asks.
use super::Attributes;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::UserInfo;

/// The reason `AlwaysDeny` gives.
const DENIED: &str = "Everything is forbidden.";

/// Allows every request (`--authorization-mode=AlwaysAllow`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysAllowAuthorizer;

#[async_trait::async_trait]
impl Authorizer for AlwaysAllowAuthorizer {
    async fn authorize(&self, _attributes: &Attributes<'_>) -> Decision {
        Decision::Allow
    }

    /// Everything, for everyone.
    async fn rules(&self, _user: &UserInfo, _namespace: &str) -> Option<Rules> {
        Some(Rules::everything())
    }
}

/// Denies every request (`--authorization-mode=AlwaysDeny`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysDenyAuthorizer;

#[async_trait::async_trait]
impl Authorizer for AlwaysDenyAuthorizer {
    async fn authorize(&self, _attributes: &Attributes<'_>) -> Decision {
        Decision::Deny(DENIED.to_owned())
    }

    /// Nothing, for anyone.
    async fn rules(&self, _user: &UserInfo, _namespace: &str) -> Option<Rules> {
        Some(Rules::default())
    }
}
