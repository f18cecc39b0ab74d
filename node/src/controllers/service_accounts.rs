//! `serviceaccount`: every active namespace has a ServiceAccount `default`, as
//! kube-controller-manager's service account controller ensures: created soon after its
//! namespace (a pass runs after every change of a namespace or of a `default` account) and
//! again when deleted. Reads go through the server's loopback client (kube-controller-manager's
//! informers read with its own credentials); creates act as the `service-account-controller`
//! account, whose role only creates ServiceAccounts.

use std::collections::BTreeSet;

use apiary_api::auth::controller_user;
use chrono::DateTime;
use chrono::Utc;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_on;

/// The controller's `--controllers` name.
pub const NAME: &str = "serviceaccount";

/// The ServiceAccount the controller acts as.
pub const ACCOUNT: &str = "service-account-controller";

/// The account every namespace gets.
pub const DEFAULT_ACCOUNT: &str = "default";

/// Ensures the `default` ServiceAccount of every active namespace.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServiceAccounts;

/// The names of the namespaces neither deleted nor terminating.
pub(super) async fn active_namespaces(
    reader: &InProcessClient,
) -> Result<Vec<String>, ControllerError> {
    Ok((reader.list("/api/v1/namespaces").await?.iter())
        .filter(|ns| {
            ns.pointer("/metadata/deletionTimestamp").is_none()
                && ns.pointer("/status/phase").and_then(Value::as_str) != Some("Terminating")
        })
        .filter_map(|ns| ns.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect())
}

/// The namespaces holding an object named `name` among the items at `collection`.
pub(super) async fn namespaces_holding(
    reader: &InProcessClient,
    collection: &str,
    name: &str,
) -> Result<Vec<Value>, ControllerError> {
    let path = format!("{collection}?fieldSelector=metadata.name%3D{name}");
    reader.list(&path).await
}

/// Whether a failed create needs no retry: the object exists already, or its namespace went
/// away or began terminating meanwhile (the next pass sees that).
pub(super) fn settled(error: &ControllerError) -> bool {
    match error {
        ControllerError::Status {
            status, message, ..
        } => {
            *status == StatusCode::CONFLICT
                || *status == StatusCode::NOT_FOUND
                || (*status == StatusCode::FORBIDDEN && message.contains("being terminated"))
        }
        ControllerError::Exchange { .. } => false,
    }
}

impl ServiceAccounts {
    /// One pass: creates the missing `default` accounts.
    async fn pass(
        reader: &InProcessClient,
        writer: &InProcessClient,
    ) -> Result<Option<DateTime<Utc>>, ControllerError> {
        let namespaces = active_namespaces(reader).await?;
        let accounts =
            namespaces_holding(reader, "/api/v1/serviceaccounts", DEFAULT_ACCOUNT).await?;
        let present: BTreeSet<&str> = (accounts.iter())
            .filter_map(|a| a.pointer("/metadata/namespace").and_then(Value::as_str))
            .collect();
        for namespace in namespaces
            .iter()
            .filter(|ns| !present.contains(ns.as_str()))
        {
            let path = format!("/api/v1/namespaces/{namespace}/serviceaccounts");
            let account = json!({
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": DEFAULT_ACCOUNT},
            });
            match writer.create(&path, &account).await {
                Ok(()) => tracing::info!(%namespace, "created the default ServiceAccount"),
                Err(error) if settled(&error) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(None)
    }
}

#[async_trait::async_trait]
impl Controller for ServiceAccounts {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let reader = InProcessClient::loopback(context.api.clone());
        let writer = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, ACCOUNT),
        );
        let interest =
            Interest::resources(&["namespaces"]).and_named("serviceaccounts", DEFAULT_ACCOUNT);
        converge_on(NAME, &context, &stop, interest, || {
            Self::pass(&reader, &writer)
        })
        .await;
    }
}
