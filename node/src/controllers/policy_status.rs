//! `validatingadmissionpolicy-status-controller`: keeps every ValidatingAdmissionPolicy's
//! `status.observedGeneration` and `status.typeChecking` true, as kube-controller-manager's
//! policy status controller does, as the account of that name in the system namespace. A
//! policy whose `observedGeneration` is not its `generation` is type-checked
//! ([`apiary_api::admission::policy::type_check`]) against the schemas the server publishes:
//! each resource its rules name is found in its group version's discovery document, its kind's
//! schema in that group version's OpenAPI v3 document (as Kubernetes' controller reads them
//! through discovery), so custom kinds are typed by their definitions' schemas. The status is
//! written through the `status` subresource; a conflict (the policy changed meanwhile) is
//! checked again at the next pass.

use std::collections::HashMap;
use std::time::Duration;

use apiary_api::admission::policy::type_check::Typed;
use apiary_api::admission::policy::type_check::expression_warnings;
use apiary_api::admission::policy::type_check::kind_schema;
use apiary_api::admission::policy::type_check::resources_to_check;
use apiary_api::auth::controller_user;
use apiary_api::cel::check::Components;
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
use super::runner::converge_paced;

/// The controller's `--controllers` name.
pub const NAME: &str = "validatingadmissionpolicy-status-controller";

/// The ServiceAccount the controller acts as.
pub const ACCOUNT: &str = "validatingadmissionpolicy-status-controller";

/// How long after a change of the store the next pass waits.
const PACE: Duration = Duration::from_millis(500);

/// Type-checks ValidatingAdmissionPolicies into their status.
#[derive(Debug, Clone, Copy, Default)]
pub struct PolicyStatus;

/// A group version's documents, read once per pass: discovery's resource list and the
/// OpenAPI v3 schemas (`None`: the group version is not served).
#[derive(Default)]
struct Reads {
    documents: HashMap<(String, String), Option<(Value, Components)>>,
}

impl Reads {
    /// Reads `group`/`version`'s documents, unless read already.
    async fn load(
        &mut self,
        client: &InProcessClient,
        group: &str,
        version: &str,
    ) -> Result<(), ControllerError> {
        let key = (group.to_owned(), version.to_owned());
        if self.documents.contains_key(&key) {
            return Ok(());
        }
        let root = match group {
            "" => format!("api/{version}"),
            _ => format!("apis/{group}/{version}"),
        };
        let discovery = client.get(&format!("/{root}")).await?;
        let openapi = client.get(&format!("/openapi/v3/{root}")).await?;
        let read = discovery.zip(openapi).map(|(discovery, mut openapi)| {
            let components = match openapi.pointer_mut("/components/schemas").map(Value::take) {
                Some(Value::Object(schemas)) => schemas,
                _ => Components::new(),
            };
            (discovery, components)
        });
        self.documents.insert(key, read);
        Ok(())
    }

    /// The schema of `kind` in `group`/`version` (loaded already).
    fn kind<'a>(&'a self, group: &'a str, version: &'a str, kind: &'a str) -> Option<Typed<'a>> {
        let (_, components) = self
            .documents
            .get(&(group.to_owned(), version.to_owned()))?
            .as_ref()?;
        Some(Typed {
            group,
            version,
            kind,
            components,
            schema: kind_schema(components, group, version, kind)?,
        })
    }

    /// The kind of `resource` in `group`/`version` (loaded already), per discovery.
    fn kind_of(&self, group: &str, version: &str, resource: &str) -> Option<&str> {
        let (discovery, _) = self
            .documents
            .get(&(group.to_owned(), version.to_owned()))?
            .as_ref()?;
        (discovery.get("resources").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .find(|r| r["name"] == resource)
            .and_then(|r| r["kind"].as_str())
    }
}

/// The group and version of an `apiVersion` (`v1`: the core group).
fn group_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The status `policy` should have: its expressions checked against what `reads` holds.
async fn wanted_status(
    client: &InProcessClient,
    reads: &mut Reads,
    policy: &Value,
    generation: i64,
) -> Result<Value, ControllerError> {
    let resources = resources_to_check(policy);
    let param_kind = policy.pointer("/spec/paramKind");
    let (param_group, param_version) = group_version(
        param_kind
            .and_then(|k| k["apiVersion"].as_str())
            .unwrap_or(""),
    );
    let param_kind_name = param_kind.and_then(|k| k["kind"].as_str()).unwrap_or("");
    for (group, version, _) in &resources {
        reads.load(client, group, version).await?;
    }
    reads.load(client, "", "v1").await?;
    if !param_kind_name.is_empty() {
        reads.load(client, param_group, param_version).await?;
    }
    let kinds: Vec<(&str, &str, &str)> = (resources.iter())
        .filter_map(|(g, v, r)| Some((g.as_str(), v.as_str(), reads.kind_of(g, v, r)?)))
        .collect();
    let mut objects: Vec<Typed<'_>> = Vec::new();
    for (group, version, kind) in kinds {
        let typed = reads.kind(group, version, kind);
        let seen = |t: &Typed<'_>| {
            objects
                .iter()
                .any(|o| o.group == t.group && o.kind == t.kind && o.version == t.version)
        };
        if let Some(typed) = typed.filter(|t| !seen(t)) {
            objects.push(typed);
        }
    }
    let params = reads.kind(param_group, param_version, param_kind_name);
    let namespace = reads.kind("", "v1", "Namespace");
    let warnings = expression_warnings(policy, &objects, params, namespace);
    let type_checking = match warnings.is_empty() {
        true => json!({}),
        false => json!({"expressionWarnings": warnings}),
    };
    let mut status = policy.get("status").cloned().unwrap_or_else(|| json!({}));
    status["observedGeneration"] = generation.into();
    status["typeChecking"] = type_checking;
    Ok(status)
}

/// One pass over every policy.
async fn pass(
    client: &InProcessClient,
    group: &str,
) -> Result<Option<DateTime<Utc>>, ControllerError> {
    let collection = format!("/apis/{group}/v1/validatingadmissionpolicies");
    let mut reads = Reads::default();
    for policy in client.list(&collection).await? {
        let generation = policy
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let observed = policy
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64);
        if observed == Some(generation) || policy.pointer("/metadata/deletionTimestamp").is_some() {
            continue;
        }
        let mut updated = policy.clone();
        updated["status"] = wanted_status(client, &mut reads, &policy, generation).await?;
        let name = policy
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let path = format!("{collection}/{name}/status");
        match client.update(&path, &updated).await {
            Ok(()) => tracing::debug!(%path, "type-checked the policy"),
            // Changed meanwhile: the change is a store change, which runs the next pass.
            Err(ControllerError::Status { status, .. })
                if status == StatusCode::CONFLICT || status == StatusCode::NOT_FOUND => {}
            Err(error) => return Err(error),
        }
    }
    Ok(None)
}

#[async_trait::async_trait]
impl Controller for PolicyStatus {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, ACCOUNT),
        );
        let group = format!("admissionregistration.{}", context.flavor.group_domain());
        let changes = (context.changes).of(Interest::resources(&[
            "validatingadmissionpolicies",
            "customresourcedefinitions",
        ]));
        converge_paced(NAME, &context, &stop, PACE, changes, || {
            pass(&client, &group)
        })
        .await;
    }
}
