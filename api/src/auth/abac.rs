//! The ABAC authorization mode (`--authorization-policy-file`, R-ACC-166, R-ACC-167): one
//! policy object per line, each granting a user or group access to resources or paths.
//! Issue 15 builds it behind this constructor; until then the mode has no opinion.

use std::sync::Arc;

use super::Attributes;
use super::Authorizer;
use super::Decision;
use crate::flavor::Flavor;

/// Why a policy file was refused (the line and what is wrong with it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct AbacError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The ABAC authorizer of one policy file.
pub struct AbacAuthorizer {
    _flavor: Flavor,
}

impl AbacAuthorizer {
    /// The policies of a file's `text` in `flavor`'s policy group.
    pub fn parse(_text: &str, flavor: Flavor) -> Result<Arc<Self>, AbacError> {
        Ok(Arc::new(Self { _flavor: flavor }))
    }
}

#[async_trait::async_trait]
impl Authorizer for AbacAuthorizer {
    async fn authorize(&self, _attributes: &Attributes<'_>) -> Decision {
        Decision::NoOpinion(String::new())
    }
}
