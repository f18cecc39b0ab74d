//! Anonymous requests (spec 001 "Anonymous requests"): a request that carries no credentials
//! any method reads, and that no method rejected, is `system:anonymous` in
//! `system:unauthenticated` (R-ACC-084). kube-apiserver turns this on by default
//! (`--anonymous-auth`) except under the `AlwaysAllow` authorization mode (R-ACC-146); that
//! mode does not exist here yet, so only the flag decides.

use super::UserInfo;

/// The user name of anonymous requests.
pub const ANONYMOUS_USER: &str = "system:anonymous";

/// The group of anonymous requests (they are not in `system:authenticated`).
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";

/// Where requests without credentials are let in as [`ANONYMOUS_USER`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anonymous {
    /// The exact request paths anonymous requests are allowed on (the authentication
    /// configuration's `anonymous.conditions[].path`, R-ACC-048); empty: every path.
    pub paths: Vec<String>,
}

impl Anonymous {
    /// Whether a request for `path` without credentials is anonymous (else 401).
    pub fn applies(&self, path: &str) -> bool {
        self.paths.is_empty() || self.paths.iter().any(|p| p == path)
    }

    /// The anonymous user.
    pub fn user() -> UserInfo {
        UserInfo {
            name: ANONYMOUS_USER.to_owned(),
            groups: vec![UNAUTHENTICATED_GROUP.to_owned()],
            ..UserInfo::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-ACC-048: with paths configured, anonymous requests are allowed only on those exact
    // paths; without, on every path.
    #[test]
    fn paths_limit_anonymous_requests_to_exact_matches() {
        let everywhere = Anonymous::default();
        assert!(everywhere.applies("/api/v1/namespaces"));
        let only = Anonymous {
            paths: vec!["/livez".to_owned(), "/readyz".to_owned()],
        };
        assert!(only.applies("/livez"));
        assert!(only.applies("/readyz"));
        assert!(!only.applies("/livez/ping"));
        assert!(!only.applies("/livez/"));
        assert!(!only.applies("/api"));
    }
}
