//! `--custom`: create throughput of custom resources beside a built-in kind, interleaved in one
//! run: ConfigMaps (the built-in baseline), custom resources of a definition with a structural
//! schema and no rules, and of one whose schema carries ten `x-kubernetes-validations` CEL
//! rules (what issue 21 asks to cost little). The three objects carry the same ten spec
//! fields; the requests go round-robin to the three replicas, and each way runs once per level
//! per round, in an order that rotates from round to round.

use std::sync::Arc;

use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::Args;
use super::ways;

/// The ten CEL rules of the ruled definition, on its `spec`.
const RULES: [&str; 10] = [
    "self.replicas >= 0",
    "self.name.startsWith('w')",
    "size(self.tags) <= 10",
    "self.tags.all(t, size(t) < 20)",
    "self.min <= self.max",
    "has(self.mode)",
    "self.mode in ['a', 'b', 'c']",
    "self.image.contains(':')",
    "self.port > 0 && self.port < 65536",
    "!has(self.deprecated)",
];

/// One way of creating an object.
#[derive(Clone, Copy)]
enum Way {
    ConfigMap,
    Plain,
    Ruled,
}

const WAYS: [Way; 3] = [Way::ConfigMap, Way::Plain, Way::Ruled];

impl Way {
    fn path(self) -> &'static str {
        match self {
            Self::ConfigMap => "/api/v1/namespaces/default/configmaps",
            Self::Plain => "/apis/bench.example.com/v1/namespaces/default/plains",
            Self::Ruled => "/apis/bench.example.com/v1/namespaces/default/ruleds",
        }
    }

    fn body(self, i: u64) -> Value {
        let name = format!("w-{i}");
        let fields = json!({"replicas": 3, "name": name, "tags": ["a", "b", "c"], "min": 1,
            "max": 5, "mode": "a", "image": "registry.example.com/app:1.0", "port": 8080,
            "owner": "bench", "tier": "web"});
        match self {
            Self::ConfigMap => {
                let data: serde_json::Map<String, Value> = (fields.as_object().into_iter())
                    .flatten()
                    .map(|(k, v)| (k.clone(), Value::String(v.to_string())))
                    .collect();
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name}, "data": data})
            }
            Self::Plain | Self::Ruled => json!({
                "apiVersion": "bench.example.com/v1",
                "kind": if matches!(self, Self::Plain) { "Plain" } else { "Ruled" },
                "metadata": {"name": name},
                "spec": fields,
            }),
        }
    }
}

impl ways::Way for Way {
    fn name(&self) -> String {
        match self {
            Self::ConfigMap => "ConfigMap",
            Self::Plain => "CR, no rules",
            Self::Ruled => "CR, 10 rules",
        }
        .to_owned()
    }

    fn collection(&self) -> String {
        self.path().to_owned()
    }

    fn object(&self, i: u64) -> Value {
        self.body(i)
    }
}

/// The definition of `plural` (`Kind` capitalized), with `rules` on its spec.
fn definition(plural: &str, kind: &str, rules: &[&str]) -> Value {
    let rules: Vec<Value> = rules.iter().map(|r| json!({"rule": r})).collect();
    let string = json!({"type": "string", "maxLength": 64});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.bench.example.com")},
        "spec": {
            "group": "bench.example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "x-kubernetes-validations": rules,
                    "properties": {
                        "replicas": {"type": "integer"}, "name": string, "min": {"type": "integer"},
                        "max": {"type": "integer"}, "mode": string, "image": string,
                        "port": {"type": "integer"}, "owner": string, "tier": string,
                        "deprecated": string,
                        "tags": {"type": "array", "maxItems": 10, "items": string},
                    }}}}}}],
        }
    })
}

/// Creates the two definitions and waits until their kinds are served (the CRD controllers
/// establish them).
async fn define(client: &HttpClient) -> Result<(), HarnessError> {
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    for (plural, kind, rules) in [
        ("plains", "Plain", &[][..]),
        ("ruleds", "Ruled", &RULES[..]),
    ] {
        let reply = client.post(crds, &definition(plural, kind, rules)).await?;
        if reply.status != StatusCode::CREATED {
            return Err(HarnessError::UnexpectedStatus {
                what: format!("creating the {plural} definition"),
                status: reply.status,
                body: reply.text(),
            });
        }
    }
    for way in [Way::Plain, Way::Ruled] {
        let what = format!("{} to be served", way.path());
        ways::until(&what, StatusCode::OK, || client.get(way.path())).await?;
    }
    Ok(())
}

/// Runs the comparison and answers its table.
pub async fn run(args: &Args) -> Result<String, HarnessError> {
    let (_cluster, replicas) = ways::cluster().await?;
    define(&replicas[0]).await?;
    let ways: Vec<Arc<dyn ways::Way>> = WAYS.iter().map(|w| Arc::new(*w) as _).collect();
    let results = ways::compare(args, &replicas, &ways).await;
    Ok(ways::table(args, &ways, &results, &[(2, 1), (1, 0)]))
}
