//! Who a request acts for, reachable by any step of its write path: the handlers set it
//! around the store call (a task-local, as the audit record), so a store step that must
//! weigh the object against the caller's own permissions (escalation prevention) asks the
//! same user and authorizer chain as the request's authorization did, without either being
//! passed through every store method.

use std::future::Future;
use std::sync::Arc;

use super::AuthorizerChain;
use super::UserInfo;

tokio::task_local! {
    static CURRENT: Arc<Requester>;
}

/// The user a request acts for (after impersonation) and the chain that authorized it.
pub struct Requester {
    /// The user.
    pub user: UserInfo,
    /// The authorizer chain.
    pub authz: AuthorizerChain,
}

impl Requester {
    /// Runs `work` with `self` as the current requester.
    pub async fn scope<F: Future>(self, work: F) -> F::Output {
        CURRENT.scope(Arc::new(self), work).await
    }

    /// The requester of the current request; `None` for writes the server makes itself
    /// outside any request (bootstrap), which act with the server's own authority.
    pub fn current() -> Option<Arc<Self>> {
        CURRENT.try_with(Arc::clone).ok()
    }
}
