//! `--admission`: what admission costs a create, interleaved in one run. One
//! ValidatingAdmissionPolicy (two CEL validations) and one validating webhook (a real TLS
//! server in this process) are installed; ConfigMaps are created in three namespaces: one that
//! neither selects (every write still asks both whether they match), one the policy's binding
//! selects, and one that both the binding and the webhook select. The requests go round-robin
//! to the three replicas, and each way runs once per level per round, in an order that rotates
//! from round to round.

use std::sync::Arc;

use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::admission_webhook;
use base64::Engine;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::Args;
use super::ways;

/// The label the policy's binding selects namespaces by.
const POLICY_LABEL: &str = "bench.example.com/policy";
/// The label the webhook selects namespaces by.
const HOOK_LABEL: &str = "bench.example.com/webhook";

/// One way of creating a ConfigMap: the namespace it goes to.
#[derive(Clone, Copy)]
enum Way {
    Unselected,
    Policy,
    PolicyAndWebhook,
}

const WAYS: [Way; 3] = [Way::Unselected, Way::Policy, Way::PolicyAndWebhook];

impl Way {
    fn namespace(self) -> &'static str {
        match self {
            Self::Unselected => "bench-unselected",
            Self::Policy => "bench-policy",
            Self::PolicyAndWebhook => "bench-policy-webhook",
        }
    }

    fn labels(self) -> Value {
        match self {
            Self::Unselected => json!({}),
            Self::Policy => json!({POLICY_LABEL: "on"}),
            Self::PolicyAndWebhook => json!({POLICY_LABEL: "on", HOOK_LABEL: "on"}),
        }
    }
}

impl ways::Way for Way {
    fn name(&self) -> String {
        match self {
            Self::Unselected => "none selects",
            Self::Policy => "policy",
            Self::PolicyAndWebhook => "policy + webhook",
        }
        .to_owned()
    }

    fn collection(&self) -> String {
        format!("/api/v1/namespaces/{}/configmaps", self.namespace())
    }

    fn object(&self, i: u64) -> Value {
        let data: serde_json::Map<String, Value> = (0..10)
            .map(|k| {
                (
                    format!("key-{k}"),
                    Value::String(format!("value {k} of {i}")),
                )
            })
            .collect();
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": format!("w-{i}"), "labels": {"app": "bench"}},
               "data": data})
    }
}

/// The policy, its binding (namespaces labelled [`POLICY_LABEL`]) and the webhook
/// configuration (namespaces labelled [`HOOK_LABEL`], served at `url`, verified by `ca`).
fn configurations(url: &str, ca: &str) -> Vec<(&'static str, Value)> {
    let configmaps = json!({"apiGroups": [""], "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]});
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    vec![
        (
            "validatingadmissionpolicies",
            json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bench"},
            "spec": {"failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [configmaps]},
                "validations": [
                    {"expression": "size(object.data) <= 20", "message": "too many keys"},
                    {"expression": "object.metadata.labels.app == 'bench'"},
                ]}}),
        ),
        (
            "validatingadmissionpolicybindings",
            json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "bench"},
                "spec": {"policyName": "bench", "validationActions": ["Deny"],
                    "matchResources": {"namespaceSelector":
                        {"matchLabels": {POLICY_LABEL: "on"}}}}}),
        ),
        (
            "validatingwebhookconfigurations",
            json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "bench"},
                "webhooks": [{"name": "bench.example.com",
                    "clientConfig": {"url": url, "caBundle": ca},
                    "rules": [configmaps], "failurePolicy": "Fail", "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "namespaceSelector": {"matchLabels": {HOOK_LABEL: "on"}}}]}),
        ),
    ]
}

/// Posts `body` to `path`, expecting 201.
async fn create(client: &HttpClient, path: &str, body: &Value) -> Result<(), HarnessError> {
    let reply = client.post(path, body).await?;
    match reply.status {
        StatusCode::CREATED => Ok(()),
        status => Err(HarnessError::UnexpectedStatus {
            what: format!("creating {path} {}", body["metadata"]["name"]),
            status,
            body: reply.text(),
        }),
    }
}

/// Waits until every replica refuses `body` in `way`'s namespace with `status` (the
/// configurations have reached its caches).
async fn wait_refused(
    replicas: &[HttpClient],
    way: Way,
    body: &Value,
    status: StatusCode,
) -> Result<(), HarnessError> {
    let path = ways::Way::collection(&way);
    let what = format!("{path} to refuse {}", body["metadata"]["name"]);
    for client in replicas {
        ways::until(&what, status, || client.post(&path, body)).await?;
    }
    Ok(())
}

/// Runs the comparison and answers its table.
pub async fn run(args: &Args) -> Result<String, HarnessError> {
    let (cluster, replicas) = ways::cluster().await?;
    let dir = cluster.dir().join("webhook");
    std::fs::create_dir_all(&dir).map_err(|source| HarnessError::Io {
        path: dir.clone(),
        source,
    })?;
    let webhook = admission_webhook::denying(&dir, &[]).await?;
    for (resource, body) in configurations(webhook.url(), &webhook.ca_pem()?) {
        let path = format!("/apis/admissionregistration.k8s.io/v1/{resource}");
        create(&replicas[0], &path, &body).await?;
    }
    for way in WAYS {
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": way.namespace(), "labels": way.labels()}});
        create(&replicas[0], "/api/v1/namespaces", &namespace).await?;
    }
    let stranger = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "stranger", "labels": {"app": "other"}}, "data": {}});
    wait_refused(
        &replicas,
        Way::Policy,
        &stranger,
        StatusCode::UNPROCESSABLE_ENTITY,
    )
    .await?;
    let denied = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "denied",
            "labels": {"app": "bench", admission_webhook::DENY_LABEL: "yes"}}, "data": {}});
    wait_refused(
        &replicas,
        Way::PolicyAndWebhook,
        &denied,
        StatusCode::FORBIDDEN,
    )
    .await?;
    let ways: Vec<Arc<dyn ways::Way>> = WAYS.iter().map(|w| Arc::new(*w) as _).collect();
    let results = ways::compare(args, &replicas, &ways).await;
    let reviews = webhook.received().len();
    println!("the webhook answered {reviews} reviews");
    Ok(ways::table(args, &ways, &results, &[(1, 0), (2, 0)]))
}
