//! `tokencleaner` (R-ACC-082): deletes bootstrap token Secrets once their expiration is
//! reached, as the `token-cleaner` ServiceAccount of the system namespace. Each pass lists the system namespace's
//! Secrets, deletes the expired bootstrap token Secrets (conditional on their uid, so a
//! Secret re-created under the same name is judged afresh) and asks to run again at the next
//! expiration.

use apiary_api::auth::BootstrapTokenSecret;
use apiary_api::auth::TOKEN_CLEANER_ACCOUNT;
use apiary_api::auth::bootstrap_token::EXPIRATION_KEY;
use apiary_api::auth::controller_user;
use chrono::DateTime;
use chrono::Utc;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge;

/// The controller's `--controllers` name.
pub const NAME: &str = "tokencleaner";

/// The token cleaner.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenCleaner;

#[async_trait::async_trait]
impl Controller for TokenCleaner {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, TOKEN_CLEANER_ACCOUNT),
        );
        converge(NAME, &context, &stop, || clean(&client, &context)).await;
    }
}

/// One pass: deletes every expired bootstrap token Secret; the next expiration to come.
async fn clean(
    client: &InProcessClient,
    context: &ControllerContext,
) -> Result<Option<DateTime<Utc>>, ControllerError> {
    let namespace = context.flavor.system_namespace();
    let secrets = client
        .list(&format!("/api/v1/namespaces/{namespace}/secrets"))
        .await?;
    let now = context.clock.now();
    let mut next: Option<DateTime<Utc>> = None;
    for object in &secrets {
        let Some(token) = BootstrapTokenSecret::from_object(object, context.flavor) else {
            continue;
        };
        if token.deleting || token.get(EXPIRATION_KEY).is_empty() {
            continue;
        }
        if token.has_expired(now) {
            let path = format!("/api/v1/namespaces/{namespace}/secrets/{}", token.name);
            client.delete(&path, &token.uid).await?;
            tracing::info!(secret = %token.name, "deleted an expired bootstrap token Secret");
        } else if let Ok(Some(at)) = token.expiration() {
            next = Some(next.map_or(at, |n| n.min(at)));
        }
    }
    Ok(next)
}
