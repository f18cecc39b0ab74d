//! The default RBAC policy through the API: the `rbac-bootstrap` controller's pass creates and
//! reconciles the defaults, the `clusterrole-aggregation` controller's pass keeps aggregated
//! roles the union of the roles they select.

use apiary_api::auth::rbac::policy::default_policy;
use apiary_node::controllers::client::InProcessClient;
use apiary_node::controllers::clusterrole_aggregation::aggregate;
use apiary_node::controllers::rbac_bootstrap::reconcile_defaults;
use serde_json::Value;
use serde_json::json;

use super::*;

const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
const BINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";

/// A router with the default policy in place.
async fn with_defaults(flavor: Flavor) -> (Router, InProcessClient) {
    let (app, _) = app_in(flavor).await;
    let client = InProcessClient::loopback(app.clone());
    let policy = default_policy(flavor);
    let all = policy.cluster_roles.len()
        + policy.cluster_role_bindings.len()
        + policy.roles.len()
        + policy.role_bindings.len();
    let written = reconcile_defaults(&client, flavor).await.expect("defaults");
    assert_eq!(written, all);
    (app, client)
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

fn role(name: &str) -> String {
    format!("{ROLES}/{name}")
}

// R-ACC-184, R-ACC-185, R-ACC-186: the first pass creates every default (in both flavors),
// labelled; a second pass writes nothing; after a default is deleted, a rule removed from
// another and a third annotated autoupdate "false" and emptied, the next pass (the next
// start) restores the first two and leaves the third as it is.
#[tokio::test]
async fn reconciliation_restores_defaults_and_respects_autoupdate_false() {
    let (_, platform) = with_defaults(Flavor::Platform).await;
    assert_eq!(
        reconcile_defaults(&platform, Flavor::Platform)
            .await
            .unwrap(),
        0
    );
    let (app, client) = with_defaults(Flavor::Kubernetes).await;
    let roles = items(&fetched(&app, ROLES).await);
    assert_eq!(
        roles.len(),
        default_policy(Flavor::Kubernetes).cluster_roles.len()
    );
    for role in &roles {
        assert_eq!(
            role["metadata"]["labels"]["kubernetes.io/bootstrapping"], "rbac-defaults",
            "{}",
            role["metadata"]["name"]
        );
    }
    let masters = fetched(&app, &format!("{BINDINGS}/cluster-admin")).await;
    assert_eq!(masters["subjects"][0]["name"], "system:masters");
    let namespaced = "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-public/roles";
    let public = fetched(
        &app,
        &format!("{namespaced}/system:controller:bootstrap-signer"),
    )
    .await;
    assert_eq!(public["rules"][1]["resourceNames"], json!(["cluster-info"]));
    assert_eq!(
        reconcile_defaults(&client, Flavor::Kubernetes)
            .await
            .unwrap(),
        0
    );

    let deleted = admin_call(&app, "DELETE", &role("system:discovery"), None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    let mut proxier = fetched(&app, &role("system:node-proxier")).await;
    let full_rules = proxier["rules"].clone();
    proxier["rules"].as_array_mut().unwrap().remove(1);
    let body = proxier.to_string();
    let updated = admin_call(&app, "PUT", &role("system:node-proxier"), Some(&body)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    let mut basic = fetched(&app, &role("system:basic-user")).await;
    basic["rules"] = json!([]);
    basic["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] =
        json!("false");
    let body = basic.to_string();
    let updated = admin_call(&app, "PUT", &role("system:basic-user"), Some(&body)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());

    assert_eq!(
        reconcile_defaults(&client, Flavor::Kubernetes)
            .await
            .unwrap(),
        2
    );
    let discovery = fetched(&app, &role("system:discovery")).await;
    assert_eq!(discovery["rules"][0]["nonResourceURLs"][0], "/api");
    let proxier = fetched(&app, &role("system:node-proxier")).await;
    let rules = proxier["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 6, "{rules:?}");
    for verb in ["get", "list", "watch"] {
        assert!(
            rules.contains(&json!({"apiGroups": [""], "resources": ["nodes"], "verbs": [verb]})),
            "{verb}: {rules:?}"
        );
    }
    let kept = [&full_rules[0], &full_rules[2], &full_rules[3]];
    assert_eq!(rules[..3].iter().collect::<Vec<_>>(), kept);
    let basic = fetched(&app, &role("system:basic-user")).await;
    assert_eq!(basic["rules"], json!([]));
}

fn has_rule(role: &Value, rule: &Value) -> bool {
    role["rules"]
        .as_array()
        .is_some_and(|rules| rules.contains(rule))
}

// R-ACC-182, R-ACC-183: aggregation makes view the rules of system:aggregate-to-view, edit
// edit's plus view's, admin edit's plus admin's; a role labelled aggregate-to-view joins all three,
// and leaves them when relabelled; matchExpressions select too, and a deleted role's rules
// go.
#[tokio::test]
async fn aggregation_follows_labels() {
    let (app, client) = with_defaults(Flavor::Kubernetes).await;
    assert_eq!(aggregate(&client, Flavor::Kubernetes).await.unwrap(), 3);
    assert_eq!(aggregate(&client, Flavor::Kubernetes).await.unwrap(), 0);
    let view_source = fetched(&app, &role("system:aggregate-to-view")).await;
    let edit_source = fetched(&app, &role("system:aggregate-to-edit")).await;
    let admin_source = fetched(&app, &role("system:aggregate-to-admin")).await;
    let view = fetched(&app, &role("view")).await;
    assert_eq!(view["rules"], view_source["rules"]);
    let edit = fetched(&app, &role("edit")).await;
    let mut wanted = edit_source["rules"].as_array().unwrap().clone();
    wanted.extend(view_source["rules"].as_array().unwrap().clone());
    assert_eq!(edit["rules"], Value::Array(wanted.clone()));
    // The matched roles in name order: `edit` before `system:aggregate-to-admin`.
    let admin = fetched(&app, &role("admin")).await;
    let mut all = wanted;
    all.extend(admin_source["rules"].as_array().unwrap().clone());
    assert_eq!(admin["rules"], Value::Array(all));

    let extra_rule =
        json!({"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]});
    let extra = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "widgets", "labels": {
            "rbac.authorization.k8s.io/aggregate-to-view": "true", "tier": "a"}},
        "rules": [extra_rule],
    });
    created(&app, ROLES, &extra.to_string()).await;
    let picker = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "picker"},
        "aggregationRule": {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}]},
    });
    created(&app, ROLES, &picker.to_string()).await;
    assert_eq!(aggregate(&client, Flavor::Kubernetes).await.unwrap(), 4);
    for name in ["view", "edit", "admin"] {
        assert!(
            has_rule(&fetched(&app, &role(name)).await, &extra_rule),
            "{name}"
        );
    }
    assert_eq!(
        fetched(&app, &role("picker")).await["rules"],
        json!([extra_rule])
    );

    let mut relabelled = fetched(&app, &role("widgets")).await;
    relabelled["metadata"]["labels"] = json!({"tier": "b"});
    let body = relabelled.to_string();
    let updated = admin_call(&app, "PUT", &role("widgets"), Some(&body)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    assert_eq!(aggregate(&client, Flavor::Kubernetes).await.unwrap(), 3);
    for name in ["view", "edit", "admin"] {
        assert!(
            !has_rule(&fetched(&app, &role(name)).await, &extra_rule),
            "{name}"
        );
    }
    assert_eq!(
        fetched(&app, &role("view")).await["rules"],
        view_source["rules"]
    );
    assert!(has_rule(&fetched(&app, &role("picker")).await, &extra_rule));

    let deleted = admin_call(&app, "DELETE", &role("widgets"), None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    assert_eq!(aggregate(&client, Flavor::Kubernetes).await.unwrap(), 1);
    assert_eq!(fetched(&app, &role("picker")).await["rules"], json!([]));
}

// R-ACC-185: before the system namespaces exist, a pass fails (to be retried) rather than
// report the namespaced defaults in place; once they exist, the next pass completes.
#[tokio::test]
async fn reconciliation_waits_for_the_system_namespaces() {
    let storage = Arc::new(empty_backend());
    let flavor = Flavor::Kubernetes;
    let app = apiary_api::router(
        storage.clone(),
        ApiConfig::new(flavor, Arc::new(AlwaysReady)),
    );
    let client = InProcessClient::loopback(app.clone());
    let error = reconcile_defaults(&client, flavor)
        .await
        .expect_err("no system namespace yet");
    assert!(error.to_string().contains("404"), "{error}");
    ensure_system_namespaces(
        storage.as_ref(),
        flavor,
        &SystemClock,
        &RandomSource::seeded(0),
    )
    .await
    .expect("bootstrap");
    let policy = default_policy(flavor);
    let namespaced = policy.roles.len() + policy.role_bindings.len();
    let written = reconcile_defaults(&client, flavor).await.expect("defaults");
    assert_eq!(written, namespaced);
}
