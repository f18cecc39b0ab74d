//! The default policy against Kubernetes' bootstrap-policy golden files (the important roles
//! spelled out here), and reconciliation's rules.

use serde_json::Value;
use serde_json::json;

use super::*;

const K: Flavor = Flavor::Kubernetes;
const P: Flavor = Flavor::Platform;

fn find<'a>(objects: &'a [Value], name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no default object {name}"))
}

fn rules(flavor: Flavor, name: &str) -> Value {
    find(&default_policy(flavor).cluster_roles, name)["rules"].clone()
}

fn binding(flavor: Flavor, name: &str) -> Value {
    find(&default_policy(flavor).cluster_role_bindings, name).clone()
}

fn all(policy: &DefaultPolicy) -> Vec<&Value> {
    policy
        .cluster_roles
        .iter()
        .chain(&policy.cluster_role_bindings)
        .chain(&policy.roles)
        .chain(&policy.role_bindings)
        .collect()
}

fn group(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name})
}

// R-ACC-184: every default role and binding, in both flavors, carries the bootstrapping label
// and the autoupdate annotation `"true"`, under the flavor's domain.
#[test]
fn every_default_object_is_labelled_and_annotated() {
    for (flavor, label, annotation) in [
        (
            K,
            "kubernetes.io/bootstrapping",
            "rbac.authorization.kubernetes.io/autoupdate",
        ),
        (
            P,
            "platform.io/bootstrapping",
            "rbac.authorization.platform.io/autoupdate",
        ),
    ] {
        let policy = default_policy(flavor);
        assert!(all(&policy).len() > 100, "{flavor:?}");
        for object in all(&policy) {
            let meta = &object["metadata"];
            assert_eq!(meta["labels"][label], "rbac-defaults", "{meta}");
            assert_eq!(meta["annotations"][annotation], "true", "{meta}");
            assert!(
                object["apiVersion"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("rbac.authorization.{}/", flavor.group_domain())),
                "{meta}"
            );
        }
    }
}

// R-ACC-192: the control-plane and node roles exist, named per flavor; nothing of the
// platform flavor's policy spells a Kubernetes name.
#[test]
fn system_roles_are_named_per_flavor() {
    let names = |flavor: Flavor| -> Vec<String> {
        default_policy(flavor)
            .cluster_roles
            .iter()
            .map(|r| r["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (k, p) = (names(K), names(P));
    for (kubernetes, platform) in [
        ("system:kube-scheduler", "system:platform-scheduler"),
        (
            "system:kube-controller-manager",
            "system:platform-controller-manager",
        ),
        ("system:kubelet-api-admin", "system:nodeagent-api-admin"),
        (
            "system:certificates.k8s.io:kubelet-serving-approver",
            "system:certificates.platform.io:nodeagent-serving-approver",
        ),
        ("system:volume-scheduler", "system:volume-scheduler"),
        ("system:node-proxier", "system:node-proxier"),
        ("system:auth-delegator", "system:auth-delegator"),
        ("system:node-bootstrapper", "system:node-bootstrapper"),
        (
            "system:persistent-volume-provisioner",
            "system:persistent-volume-provisioner",
        ),
        ("system:node", "system:node"),
    ] {
        assert!(k.iter().any(|n| n == kubernetes), "{kubernetes}");
        assert!(p.iter().any(|n| n == platform), "{platform}");
    }
    let platform = serde_json::to_string(&all(&default_policy(P))).unwrap();
    for word in ["kube", "k8s.io", "kubernetes"] {
        assert!(!platform.contains(word), "platform policy spells {word}");
    }
    let namespaced = default_policy(P);
    assert_eq!(
        find(&namespaced.roles, "system:controller:token-cleaner")["metadata"]["namespace"],
        "platform-system"
    );
    assert!(
        namespaced
            .roles
            .iter()
            .any(|r| r["metadata"]["name"] == "system::leader-locking-platform-scheduler")
    );
}

// R-ACC-187, R-ACC-189, R-ACC-190, R-ACC-191: cluster-admin, discovery and monitoring roles
// have Kubernetes' rules and bindings.
#[test]
fn discovery_and_admin_roles_match_kubernetes() {
    assert_eq!(
        rules(K, "cluster-admin"),
        json!([
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ])
    );
    assert_eq!(
        binding(K, "cluster-admin")["subjects"],
        json!([group("system:masters")])
    );
    assert_eq!(
        rules(K, "system:basic-user"),
        json!([
            {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
            {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
        ])
    );
    assert_eq!(
        rules(K, "system:discovery"),
        json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]}])
    );
    assert_eq!(
        rules(K, "system:public-info-viewer"),
        json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}])
    );
    assert_eq!(
        rules(K, "system:monitoring"),
        json!([{"nonResourceURLs": ["/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*"], "verbs": ["get"]}])
    );
    for name in ["system:basic-user", "system:discovery"] {
        assert_eq!(
            binding(K, name)["subjects"],
            json!([group("system:authenticated")])
        );
    }
    assert_eq!(
        binding(K, "system:public-info-viewer")["subjects"],
        json!([
            group("system:authenticated"),
            group("system:unauthenticated")
        ])
    );
    assert_eq!(
        binding(K, "system:monitoring")["subjects"],
        json!([group("system:monitoring")])
    );
}

// R-ACC-183, R-ACC-188, R-ACC-193: admin, edit and view aggregate through the
// `aggregate-to-*` labels (edit into admin, view into edit) and have no binding; the legacy
// `system:node` role is bound to no one.
#[test]
fn user_roles_aggregate_and_are_unbound() {
    let policy = default_policy(K);
    for (role, from, into) in [
        ("admin", "admin", None),
        ("edit", "edit", Some("admin")),
        ("view", "view", Some("edit")),
    ] {
        let object = find(&policy.cluster_roles, role);
        assert_eq!(
            object["aggregationRule"],
            json!({"clusterRoleSelectors": [{"matchLabels": {
                format!("rbac.authorization.k8s.io/aggregate-to-{from}"): "true"}}]})
        );
        assert!(object.get("rules").is_none(), "{role}");
        let label = into.map(|i| format!("rbac.authorization.k8s.io/aggregate-to-{i}"));
        if let Some(label) = label {
            assert_eq!(object["metadata"]["labels"][&label], "true");
        }
        let aggregate = find(
            &policy.cluster_roles,
            &format!("system:aggregate-to-{from}"),
        );
        let label = format!("rbac.authorization.k8s.io/aggregate-to-{from}");
        assert_eq!(aggregate["metadata"]["labels"][&label], "true");
        let bound = policy
            .cluster_role_bindings
            .iter()
            .chain(&policy.role_bindings)
            .any(|b| b["roleRef"]["name"] == role);
        assert!(!bound, "{role} has a default binding");
    }
    let node = binding(K, "system:node");
    assert_eq!(node["roleRef"]["name"], "system:node");
    assert!(node.get("subjects").is_none());
    let platform = default_policy(P);
    let label = "rbac.authorization.platform.io/aggregate-to-view";
    assert_eq!(
        find(&platform.cluster_roles, "system:aggregate-to-view")["metadata"]["labels"][label],
        "true"
    );
}

fn grants(rules: &Value, verbs: &[&str], resource: &str) -> bool {
    rules.as_array().unwrap().iter().any(|rule| {
        let has = |field: &str, item: &str| {
            rule[field]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == item || x == "*"))
        };
        has("resources", resource) && verbs.iter().any(|v| has("verbs", v))
    })
}

// R-ACC-195, R-ACC-196, R-ACC-197: what aggregates into admin and edit never writes
// Endpoints or EndpointSlices; edit's rules do not touch roles or bindings; view's rules do
// not read Secrets (while edit's do).
#[test]
fn user_role_exceptions() {
    let writes = ["create", "update", "patch", "delete", "deletecollection"];
    for role in [
        "system:aggregate-to-admin",
        "system:aggregate-to-edit",
        "system:aggregate-to-view",
    ] {
        let rules = rules(K, role);
        for resource in ["endpoints", "endpointslices"] {
            assert!(
                !grants(&rules, &writes, resource),
                "{role} writes {resource}"
            );
        }
    }
    let edit = rules(K, "system:aggregate-to-edit");
    for resource in [
        "roles",
        "rolebindings",
        "clusterroles",
        "clusterrolebindings",
    ] {
        assert!(
            !grants(&edit, &["get", "list", "create"], resource),
            "{resource}"
        );
    }
    assert!(grants(&edit, &["create"], "secrets"));
    assert!(grants(
        &rules(K, "system:aggregate-to-admin"),
        &["create"],
        "roles"
    ));
    let view = rules(K, "system:aggregate-to-view");
    assert!(!grants(&view, &["get", "list", "watch"], "secrets"));
    assert!(grants(&view, &["get"], "endpoints"));
    assert!(grants(&view, &["list"], "endpointslices"));
}

// The node proxier's role is Kubernetes' (its golden file), bound to the proxy's user.
#[test]
fn node_proxier_matches_kubernetes() {
    assert_eq!(
        rules(K, "system:node-proxier"),
        json!([
            {"apiGroups": [""], "resources": ["endpoints", "services"], "verbs": ["list", "watch"]},
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
        ])
    );
    assert_eq!(
        binding(K, "system:node-proxier")["subjects"],
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-proxy"}])
    );
}

// R-ACC-194: one `system:controller:<name>` role per built-in controller, each bound to its
// ServiceAccount in the system namespace; spot checks of the golden rules.
#[test]
fn controller_roles_match_kubernetes() {
    let policy = default_policy(K);
    let controllers: Vec<&Value> = policy
        .cluster_roles
        .iter()
        .filter(|r| {
            r["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with(CONTROLLER_ROLE_PREFIX)
        })
        .collect();
    assert_eq!(controllers.len(), 38);
    for role in controllers {
        let name = role["metadata"]["name"].as_str().unwrap();
        let account = name.strip_prefix(CONTROLLER_ROLE_PREFIX).unwrap();
        assert_eq!(
            binding(K, name)["subjects"],
            json!([{"kind": "ServiceAccount", "name": account, "namespace": "kube-system"}])
        );
    }
    assert_eq!(
        rules(K, "system:controller:clusterrole-aggregation-controller"),
        json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
            "verbs": ["escalate", "get", "list", "patch", "update", "watch"]}])
    );
    assert_eq!(
        rules(K, "system:controller:namespace-controller"),
        json!([
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["delete", "get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["namespaces/finalize", "namespaces/status"], "verbs": ["update"]},
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["delete", "deletecollection", "get", "list", "watch"]},
        ])
    );
    assert_eq!(
        rules(K, "system:controller:certificate-controller")[3],
        json!({"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["sign"],
            "resourceNames": ["kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
                "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"]})
    );
}

// The bootstrap token controllers' Roles grant what `ControllerRolesAuthorizer` grants them:
// secrets in the system namespace, cluster-info in the public one, events in both groups.
#[test]
fn bootstrap_token_controller_roles_match_kubernetes() {
    let policy = default_policy(K);
    let role = |namespace: &str, name: &str| {
        policy
            .roles
            .iter()
            .find(|r| r["metadata"]["name"] == name && r["metadata"]["namespace"] == namespace)
            .unwrap_or_else(|| panic!("no role {namespace}/{name}"))["rules"]
            .clone()
    };
    let events = json!({"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]});
    assert_eq!(
        role("kube-system", "system:controller:token-cleaner"),
        json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["delete", "get", "list", "watch"]}, events])
    );
    assert_eq!(
        role("kube-system", "system:controller:bootstrap-signer"),
        json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}])
    );
    assert_eq!(
        role("kube-public", "system:controller:bootstrap-signer"),
        json!([
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["update"], "resourceNames": ["cluster-info"]},
            events,
        ])
    );
    let bound: Vec<(&Value, &Value)> = policy
        .role_bindings
        .iter()
        .map(|b| (&b["metadata"]["namespace"], &b["metadata"]["name"]))
        .collect();
    assert_eq!(bound.len(), 7);
    for role in &policy.roles {
        let key = (&role["metadata"]["namespace"], &role["metadata"]["name"]);
        let named = policy
            .role_bindings
            .iter()
            .any(|b| b["metadata"]["namespace"] == *key.0 && b["roleRef"]["name"] == *key.1);
        assert!(named, "role {key:?} has no binding");
    }
}

fn stored(mut object: Value) -> Value {
    object["metadata"]["resourceVersion"] = json!("7");
    object["metadata"]["uid"] = json!("u");
    object
}

// R-ACC-185: reconciliation adds back a removed rule, keeps extra rules, labels and
// annotations (stored values win), and leaves a complete object unchanged.
#[test]
fn reconciliation_restores_missing_rules_and_keeps_extras() {
    let wanted = find(&default_policy(K).cluster_roles, "system:node-proxier").clone();
    assert_eq!(
        reconcile(&stored(wanted.clone()), &wanted, K),
        Reconciled::Unchanged
    );
    let mut changed = stored(wanted.clone());
    let extra = json!({"apiGroups": ["x"], "resources": ["y"], "verbs": ["get"]});
    changed["rules"] = json!([
        wanted["rules"][0],
        wanted["rules"][2],
        wanted["rules"][3],
        extra
    ]);
    changed["metadata"]["labels"] = json!({"team": "a"});
    changed["metadata"]["annotations"] =
        json!({"rbac.authorization.kubernetes.io/autoupdate": "yes"});
    let Reconciled::Update(result) = reconcile(&changed, &wanted, K) else {
        panic!("not updated");
    };
    let rules = result["rules"].as_array().unwrap();
    assert_eq!(&rules[..4], changed["rules"].as_array().unwrap().as_slice());
    assert_eq!(
        rules[4..],
        [
            json!({"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}),
            json!({"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}),
            json!({"apiGroups": [""], "resources": ["nodes"], "verbs": ["watch"]}),
        ]
    );
    assert_eq!(result["metadata"]["labels"]["team"], "a");
    assert_eq!(
        result["metadata"]["labels"]["kubernetes.io/bootstrapping"],
        "rbac-defaults"
    );
    assert_eq!(
        result["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"],
        "yes"
    );
    assert_eq!(result["metadata"]["resourceVersion"], "7");
    // A broader stored rule covers the default's.
    let mut broad = stored(wanted.clone());
    broad["rules"] = json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]);
    assert_eq!(reconcile(&broad, &wanted, K), Reconciled::Unchanged);
}

// R-ACC-186: an object annotated autoupdate "false" is left alone, however it differs.
#[test]
fn reconciliation_leaves_protected_objects_alone() {
    let wanted = find(&default_policy(K).cluster_roles, "system:discovery").clone();
    let mut changed = stored(wanted.clone());
    changed["rules"] = json!([]);
    changed["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] =
        json!("false");
    assert_eq!(reconcile(&changed, &wanted, K), Reconciled::Protected);
    let platform = find(&default_policy(P).cluster_roles, "system:discovery").clone();
    let mut changed = stored(platform.clone());
    changed["rules"] = json!([]);
    changed["metadata"]["annotations"]["rbac.authorization.platform.io/autoupdate"] =
        json!("false");
    assert_eq!(reconcile(&changed, &platform, P), Reconciled::Protected);
}

// R-ACC-182, R-ACC-185: an aggregated role keeps its aggregated rules and gains a missing
// selector; a binding gains missing subjects, keeps extra ones, and is recreated when its
// roleRef differs.
#[test]
fn reconciliation_of_aggregated_roles_and_bindings() {
    let wanted = find(&default_policy(K).cluster_roles, "view").clone();
    let mut aggregated = stored(wanted.clone());
    aggregated["rules"] = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]);
    assert_eq!(reconcile(&aggregated, &wanted, K), Reconciled::Unchanged);
    let other = json!({"matchLabels": {"team": "a"}});
    aggregated["aggregationRule"] = json!({"clusterRoleSelectors": [other]});
    let Reconciled::Update(result) = reconcile(&aggregated, &wanted, K) else {
        panic!("not updated");
    };
    assert_eq!(
        result["aggregationRule"]["clusterRoleSelectors"],
        json!([other, wanted["aggregationRule"]["clusterRoleSelectors"][0]])
    );
    assert_eq!(result["rules"], aggregated["rules"]);

    let wanted = binding(K, "system:public-info-viewer");
    let mut existing = stored(wanted.clone());
    existing["subjects"] = json!([group("extra"), group("system:unauthenticated")]);
    let Reconciled::Update(result) = reconcile(&existing, &wanted, K) else {
        panic!("not updated");
    };
    assert_eq!(
        result["subjects"],
        json!([
            group("extra"),
            group("system:unauthenticated"),
            group("system:authenticated")
        ])
    );
    existing["roleRef"]["name"] = json!("view");
    let Reconciled::Recreate(result) = reconcile(&existing, &wanted, K) else {
        panic!("not recreated");
    };
    assert_eq!(result["roleRef"], wanted["roleRef"]);
    assert!(result["metadata"].get("resourceVersion").is_none());
    assert!(result["metadata"].get("uid").is_none());
}
