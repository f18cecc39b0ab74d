//! `clusterrole-aggregation` (R-ACC-182, R-ACC-183): the rules of a ClusterRole with an
//! `aggregationRule` are the union of the rules of the ClusterRoles its
//! `clusterRoleSelectors` match, as Kubernetes' aggregation controller makes them: selector by
//! selector, the matching roles (not the aggregating role itself) in name order, each rule
//! once, in the order first met. Every pass lists the ClusterRoles and rewrites the aggregated
//! ones whose rules differ; passes run on every change of a ClusterRole, so roles added,
//! relabelled, changed or removed are followed. An aggregated role that matches another
//! aggregated role (`admin` takes in `edit`, which takes in `view`) is computed from that
//! role's aggregated rules within the same pass. It acts as the server's loopback user, like
//! [`super::rbac_bootstrap`].

use std::collections::BTreeMap;

use apiary_api::Flavor;
use apiary_api::auth::rbac::policy::rbac_group;
use apiary_api::validation::label_selector;
use serde_json::Map;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge_on;

/// The controller's `--controllers` name.
pub const NAME: &str = "clusterrole-aggregation";

/// The aggregation controller.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterRoleAggregation;

#[async_trait::async_trait]
impl Controller for ClusterRoleAggregation {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::loopback(context.api.clone());
        converge_on(
            NAME,
            &context,
            &stop,
            Interest::resources(&["clusterroles"]),
            || async { aggregate(&client, context.flavor).await.map(|_| None) },
        )
        .await;
    }
}

fn rules(role: &Value) -> Vec<Value> {
    role.get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn selectors(role: &Value) -> Option<&Vec<Value>> {
    role.pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
}

/// The union of the rules of the roles in `roles` that `role`'s selectors match.
fn union(name: &str, selectors: &[Value], roles: &BTreeMap<String, Value>) -> Vec<Value> {
    let empty = Map::new();
    let mut union: Vec<Value> = Vec::new();
    for selector in selectors {
        for (other, role) in roles {
            let labels = role
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            if other == name || !label_selector::matches(selector, labels) {
                continue;
            }
            for rule in rules(role) {
                if !union.contains(&rule) {
                    union.push(rule);
                }
            }
        }
    }
    union
}

/// The aggregated rules of every aggregated role in `roles` (by name), computed until no role
/// changes (an aggregated role may take in another's); the roles whose rules changed, by name.
pub fn aggregated_rules(roles: &mut BTreeMap<String, Value>) -> Vec<String> {
    let mut changed = Vec::new();
    for _ in 0..=roles.len() {
        let mut any = false;
        let names: Vec<String> = roles.keys().cloned().collect();
        for name in names {
            let Some(selectors) = roles.get(&name).and_then(selectors).cloned() else {
                continue;
            };
            let rules = union(&name, &selectors, roles);
            let Some(role) = roles.get_mut(&name) else {
                continue;
            };
            if self::rules(role) != rules {
                role["rules"] = Value::Array(rules);
                any = true;
                if !changed.contains(&name) {
                    changed.push(name);
                }
            }
        }
        if !any {
            break;
        }
    }
    changed.sort();
    changed
}

/// One pass: rewrites the aggregated ClusterRoles whose rules are not the union of the rules
/// of the roles they select; how many it rewrote.
pub async fn aggregate(client: &InProcessClient, flavor: Flavor) -> Result<usize, ControllerError> {
    let collection = format!("/apis/{}/v1/clusterroles", rbac_group(flavor));
    let mut roles: BTreeMap<String, Value> = client
        .list(&collection)
        .await?
        .into_iter()
        .filter_map(|role| {
            let name = role["metadata"]["name"].as_str()?.to_owned();
            Some((name, role))
        })
        .collect();
    let changed = aggregated_rules(&mut roles);
    for name in &changed {
        let mut role = roles[name].clone();
        role["apiVersion"] = Value::String(format!("{}/v1", rbac_group(flavor)));
        role["kind"] = Value::String("ClusterRole".to_owned());
        client
            .update(&format!("{collection}/{name}"), &role)
            .await?;
        tracing::info!(role = %name, "aggregated rules updated");
    }
    Ok(changed.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(resource: &str) -> Value {
        json!({"apiGroups": [""], "resources": [resource], "verbs": ["get"]})
    }

    fn role(name: &str, labels: Value, rules: &[&str]) -> (String, Value) {
        let rules: Vec<Value> = rules.iter().map(|r| rule(r)).collect();
        let role = json!({"metadata": {"name": name, "labels": labels}, "rules": rules});
        (name.to_owned(), role)
    }

    fn aggregating(name: &str, labels: Value, selectors: Value) -> (String, Value) {
        let role = json!({"metadata": {"name": name, "labels": labels},
            "aggregationRule": {"clusterRoleSelectors": selectors}});
        (name.to_owned(), role)
    }

    // R-ACC-182, R-ACC-183: an aggregated role's rules are the union of the matched roles'
    // rules (selector by selector, roles in name order, each rule once); an aggregated role
    // taking in another gets that role's aggregated rules in the same computation; a relabelled
    // role's rules leave, and matchExpressions select as matchLabels do.
    #[test]
    fn aggregated_rules_follow_labels() {
        let to_view = json!([{"matchLabels": {"aggregate-to-view": "true"}}]);
        let to_edit = json!([{"matchLabels": {"aggregate-to-edit": "true"}}]);
        let mut roles: BTreeMap<String, Value> = [
            aggregating("edit", json!({}), to_edit),
            aggregating("view", json!({"aggregate-to-edit": "true"}), to_view),
            role(
                "b-view",
                json!({"aggregate-to-view": "true"}),
                &["pods", "secrets"],
            ),
            role(
                "a-view",
                json!({"aggregate-to-view": "true"}),
                &["services", "pods"],
            ),
            role("edit-only", json!({"aggregate-to-edit": "true"}), &["jobs"]),
            role("other", json!({"tier": "a"}), &["nodes"]),
            aggregating(
                "picker",
                json!({}),
                json!([{"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}]),
            ),
        ]
        .into_iter()
        .collect();
        let changed = aggregated_rules(&mut roles);
        assert_eq!(changed, ["edit", "picker", "view"]);
        let view = [rule("services"), rule("pods"), rule("secrets")];
        assert_eq!(roles["view"]["rules"], json!(view));
        let mut edit = vec![rule("jobs")];
        edit.extend(view.clone());
        assert_eq!(roles["edit"]["rules"], json!(edit));
        assert_eq!(roles["picker"]["rules"], json!([rule("nodes")]));
        assert!(aggregated_rules(&mut roles).is_empty());

        roles.get_mut("a-view").unwrap()["metadata"]["labels"] = json!({"tier": "a"});
        let changed = aggregated_rules(&mut roles);
        assert_eq!(changed, ["edit", "picker", "view"]);
        assert_eq!(
            roles["view"]["rules"],
            json!([rule("pods"), rule("secrets")])
        );
        assert_eq!(
            roles["edit"]["rules"],
            json!([rule("jobs"), rule("pods"), rule("secrets")])
        );
        assert_eq!(
            roles["picker"]["rules"],
            json!([rule("services"), rule("pods"), rule("nodes")])
        );
        roles.remove("b-view");
        aggregated_rules(&mut roles);
        assert_eq!(roles["view"]["rules"], json!([]));
    }
}
