//! `root-ca-cert-publisher`: every active namespace has the ConfigMap `kube-root-ca.crt`
//! whose `ca.crt` is the CA bundle clients verify the API server with (what the projected
//! `kube-api-access-` volume of every pod mounts), annotated `<domain>/description`, as
//! kube-controller-manager's publisher keeps it: created when missing, and its data and
//! annotation put back when changed. Reads go through the server's loopback client; writes
//! act as the `root-ca-cert-publisher` account, whose role creates and updates ConfigMaps.

use std::collections::BTreeMap;
use std::sync::Arc;

use apiary_api::auth::controller_user;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_on;
use super::service_accounts::active_namespaces;
use super::service_accounts::namespaces_holding;
use super::service_accounts::settled;

/// The controller's `--controllers` name.
pub const NAME: &str = "root-ca-cert-publisher";

/// The ServiceAccount the controller acts as.
pub const ACCOUNT: &str = "root-ca-cert-publisher";

/// The ConfigMap published in every namespace.
pub const CONFIG_MAP: &str = "kube-root-ca.crt";

/// The key of the bundle in the ConfigMap.
pub const KEY: &str = "ca.crt";

/// Kubernetes' text of the ConfigMap's description annotation.
pub const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the \
     kube-apiserver when using internal endpoints such as the internal service IP or \
     kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes \
     clusters.";

/// Publishes the CA bundle in every active namespace.
#[derive(Debug, Clone)]
pub struct RootCaPublisher {
    /// The PEM bundle published.
    pub bundle: Arc<str>,
}

impl RootCaPublisher {
    /// The data every copy holds: the bundle under [`KEY`].
    fn wanted_data(&self) -> Value {
        json!({ KEY: &*self.bundle })
    }

    /// One pass: creates the missing ConfigMaps and puts back changed ones.
    async fn pass(
        &self,
        reader: &InProcessClient,
        writer: &InProcessClient,
        annotation: &str,
    ) -> Result<Option<DateTime<Utc>>, ControllerError> {
        let namespaces = active_namespaces(reader).await?;
        let maps = namespaces_holding(reader, "/api/v1/configmaps", CONFIG_MAP).await?;
        let by_namespace: BTreeMap<&str, &Value> = (maps.iter())
            .filter_map(|m| Some((m.pointer("/metadata/namespace")?.as_str()?, m)))
            .collect();
        let data = self.wanted_data();
        for namespace in &namespaces {
            let collection = format!("/api/v1/namespaces/{namespace}/configmaps");
            let written = match by_namespace.get(namespace.as_str()) {
                None => {
                    let map = json!({
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {
                            "name": CONFIG_MAP,
                            "annotations": {annotation: DESCRIPTION},
                        },
                        "data": data,
                    });
                    writer.create(&collection, &map).await
                }
                Some(map) => {
                    let described = (map.pointer("/metadata/annotations"))
                        .and_then(|a| a.get(annotation))
                        .and_then(Value::as_str)
                        .is_some_and(|d| !d.is_empty());
                    if map.get("data") == Some(&data) && described {
                        continue;
                    }
                    let mut map = (*map).clone();
                    map["data"] = data.clone();
                    let annotations = &mut map["metadata"]["annotations"];
                    if !annotations.is_object() {
                        *annotations = json!({});
                    }
                    annotations[annotation] = json!(DESCRIPTION);
                    let path = format!("{collection}/{CONFIG_MAP}");
                    writer.update(&path, &map).await
                }
            };
            match written {
                Ok(()) => tracing::info!(%namespace, "published the root CA bundle"),
                Err(error) if settled(&error) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(None)
    }
}

#[async_trait::async_trait]
impl Controller for RootCaPublisher {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let reader = InProcessClient::loopback(context.api.clone());
        let writer = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, ACCOUNT),
        );
        let annotation = format!("{}/description", context.flavor.label_domain());
        let interest = Interest::resources(&["namespaces"]).and_named("configmaps", CONFIG_MAP);
        converge_on(NAME, &context, &stop, interest, || {
            self.pass(&reader, &writer, &annotation)
        })
        .await;
    }
}
