//! The FlowSchemas and PriorityLevelConfigurations every cluster starts with, as Kubernetes
//! 1.37 bootstraps them: the mandatory `exempt` and `catch-all`, and the suggested levels
//! (`system`, `node-high`, `leader-election`, `workload-high`, `workload-low`,
//! `global-default`) with the schemas that feed them.

use serde_json::Value;
use serde_json::json;

use super::config::Config;
use crate::flavor::Flavor;

/// The group every user who presented credentials is in.
const AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group of the nodes' agents.
const NODES: &str = "system:nodes";
/// The controller manager's and the scheduler's user names.
const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
const SCHEDULER: &str = "system:kube-scheduler";

/// The annotation that says whether the server keeps an object's spec at its bootstrap value.
pub fn autoupdate_annotation(flavor: Flavor) -> String {
    format!("apf.{}/autoupdate-spec", flavor.label_domain())
}

fn group(name: &str) -> Value {
    json!({"kind": "Group", "group": {"name": name}})
}

fn user(name: &str) -> Value {
    json!({"kind": "User", "user": {"name": name}})
}

fn system_service_accounts(flavor: Flavor) -> Value {
    json!({"kind": "ServiceAccount",
        "serviceAccount": {"namespace": flavor.system_namespace(), "name": "*"}})
}

/// A rule of `subjects` over every resource and every non-resource URL.
fn everything(subjects: Vec<Value>) -> Value {
    json!([{
        "subjects": subjects,
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "clusterScope": true, "namespaces": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    }])
}

fn schema(
    flavor: Flavor,
    name: &str,
    level: &str,
    precedence: i64,
    distinguisher: Option<&str>,
    rules: Value,
) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": rules,
    });
    if let Some(method) = distinguisher {
        spec["distinguisherMethod"] = json!({"type": method});
    }
    json!({
        "apiVersion": format!("flowcontrol.apiserver.{}/v1", flavor.group_domain()),
        "kind": "FlowSchema",
        "metadata": {"name": name, "annotations": {autoupdate_annotation(flavor): "true"}},
        "spec": spec,
    })
}

fn level(flavor: Flavor, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("flowcontrol.apiserver.{}/v1", flavor.group_domain()),
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name, "annotations": {autoupdate_annotation(flavor): "true"}},
        "spec": spec,
    })
}

/// A limited level that queues: `shares`, `lendable` percent, and its queuing.
fn queued(flavor: Flavor, name: &str, shares: i64, lendable: i64, queues: i64, hand: i64) -> Value {
    level(
        flavor,
        name,
        json!({"type": "Limited", "limited": {
            "nominalConcurrencyShares": shares,
            "lendablePercent": lendable,
            "limitResponse": {"type": "Queue", "queuing": {
                "queues": queues, "handSize": hand, "queueLengthLimit": 50}},
        }}),
    )
}

/// The mandatory levels and schemas.
pub fn mandatory(flavor: Flavor) -> (Vec<Value>, Vec<Value>) {
    let levels = vec![
        level(
            flavor,
            "exempt",
            json!({"type": "Exempt",
                "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
        level(
            flavor,
            "catch-all",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                "lendablePercent": 0, "limitResponse": {"type": "Reject"}}}),
        ),
    ];
    let schemas = vec![
        schema(
            flavor,
            "exempt",
            "exempt",
            1,
            None,
            everything(vec![group(crate::auth::SYSTEM_MASTERS)]),
        ),
        schema(
            flavor,
            "catch-all",
            "catch-all",
            10_000,
            Some("ByUser"),
            everything(vec![group(UNAUTHENTICATED), group(AUTHENTICATED)]),
        ),
    ];
    (schemas, levels)
}

/// The suggested levels and schemas.
pub fn suggested(flavor: Flavor) -> (Vec<Value>, Vec<Value>) {
    let coordination = format!("coordination.{}", flavor.group_domain());
    let levels = vec![
        queued(flavor, "system", 30, 33, 64, 6),
        queued(flavor, "node-high", 40, 25, 64, 6),
        queued(flavor, "leader-election", 10, 0, 16, 4),
        queued(flavor, "workload-high", 40, 50, 128, 6),
        queued(flavor, "workload-low", 100, 90, 128, 6),
        queued(flavor, "global-default", 20, 50, 128, 6),
    ];
    let everyone = || vec![group(UNAUTHENTICATED), group(AUTHENTICATED)];
    let schemas = vec![
        schema(
            flavor,
            "system-nodes",
            "system",
            500,
            Some("ByUser"),
            everything(vec![group(NODES)]),
        ),
        schema(
            flavor,
            "system-node-high",
            "node-high",
            400,
            Some("ByUser"),
            json!([{"subjects": [group(NODES)], "resourceRules": [
                {"verbs": ["*"], "apiGroups": [""], "resources": ["nodes", "nodes/status"],
                    "clusterScope": true, "namespaces": ["*"]},
                {"verbs": ["*"], "apiGroups": [coordination], "resources": ["leases"],
                    "namespaces": ["*"]},
            ]}]),
        ),
        schema(
            flavor,
            "probes",
            "exempt",
            2,
            None,
            json!([{"subjects": everyone(), "nonResourceRules": [
                {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]),
        ),
        schema(
            flavor,
            "system-leader-election",
            "leader-election",
            100,
            Some("ByUser"),
            json!([{"subjects": [user(CONTROLLER_MANAGER), user(SCHEDULER),
                    system_service_accounts(flavor)],
                "resourceRules": [{"verbs": ["get", "create", "update"],
                    "apiGroups": [coordination], "resources": ["leases"], "namespaces": ["*"]}]}]),
        ),
        schema(
            flavor,
            "kube-controller-manager",
            "workload-high",
            800,
            Some("ByNamespace"),
            everything(vec![user(CONTROLLER_MANAGER)]),
        ),
        schema(
            flavor,
            "kube-scheduler",
            "workload-high",
            800,
            Some("ByNamespace"),
            everything(vec![user(SCHEDULER)]),
        ),
        schema(
            flavor,
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some("ByNamespace"),
            everything(vec![system_service_accounts(flavor)]),
        ),
        schema(
            flavor,
            "service-accounts",
            "workload-low",
            9000,
            Some("ByUser"),
            everything(vec![group("system:serviceaccounts")]),
        ),
        schema(
            flavor,
            "global-default",
            "global-default",
            9900,
            Some("ByUser"),
            everything(everyone()),
        ),
    ];
    (schemas, levels)
}

/// Every bootstrap schema and level, mandatory first.
#[cfg(test)]
pub fn all(flavor: Flavor) -> (Vec<Value>, Vec<Value>) {
    let (mut schemas, mut levels) = mandatory(flavor);
    let (more_schemas, more_levels) = suggested(flavor);
    schemas.extend(more_schemas);
    levels.extend(more_levels);
    (schemas, levels)
}

/// The mandatory objects as configuration: what the filter uses before the stored
/// configuration is read.
pub fn mandatory_config(flavor: Flavor) -> Config {
    let (schemas, levels) = mandatory(flavor);
    Config::new(&schemas, &levels, &Config::default())
}
