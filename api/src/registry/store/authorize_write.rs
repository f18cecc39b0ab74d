//! The store's object authorization step: a kind whose objects grant permissions (RBAC roles
//! and bindings) has a [`WriteAuthorization`] that weighs the object as it will be stored
//! (after defaults, patch application and validation, before allocation and the write)
//! against the requesting user's own permissions. Kinds without one skip the step, and so do
//! writes the server makes outside any request.

use std::sync::Arc;

use serde_json::Value;

use super::Store;
use crate::auth::Requester;
use crate::error::ApiError;
use crate::storage::Storage;

/// A check of the object a write stores against who writes it.
///
/// ### Correctness requirements
/// - Decide from the object, the previous object (`None` on create), the requester and reads
///   of `storage`; never write.
/// - Refuse with the 4xx the API answers (403 for missing permissions).
#[async_trait::async_trait]
pub trait WriteAuthorization: Send + Sync + 'static {
    /// Ok when `requester` may store `new` in `namespace` (empty: cluster scope) over `old`.
    async fn authorize_write(
        &self,
        storage: &dyn Storage,
        requester: &Requester,
        namespace: &str,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError>;
}

impl Store {
    /// The store, checking writes with `check`.
    pub fn with_write_authorization(mut self, check: Arc<dyn WriteAuthorization>) -> Self {
        self.write_authorization = Some(check);
        self
    }

    /// Runs the kind's write authorization, if any, for the current requester.
    pub(super) async fn authorize_write(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(requester) = Requester::current() else {
            return Ok(());
        };
        match &self.write_authorization {
            Some(check) => {
                check
                    .authorize_write(storage, &requester, namespace, new, old)
                    .await
            }
            None => Ok(()),
        }
    }
}
