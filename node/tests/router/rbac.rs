//! RBAC through the router: roles and bindings created by the admin grant a certificate
//! user exactly their rules, in the binding's namespace or cluster-wide; the 403 text is
//! Kubernetes'; role and binding writes are refused when they would escalate, allowed with
//! the permissions or `escalate` / `bind`; `roleRef` is immutable; the reviews answer from
//! RBAC.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::auth::rbac::RbacAuthorizer;

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
const GROUP: &str = "rbac.authorization.k8s.io";

/// A router with RBAC after the default authorizers, its store and its RBAC authorizer, with
/// the namespaces `a` and `b`.
pub(super) async fn rbac_app() -> (Router, Arc<Backend>, Arc<RbacAuthorizer>) {
    rbac_app_admitting(&[]).await
}

/// [`rbac_app`] whose admission chain is the default set plus `enable`.
pub(super) async fn rbac_app_admitting(
    enable: &[&str],
) -> (Router, Arc<Backend>, Arc<RbacAuthorizer>) {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let rbac = RbacAuthorizer::new(Flavor::Kubernetes, storage.clone());
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.authorizers.push(rbac.clone());
    let enable: Vec<String> = enable.iter().map(|s| (*s).to_owned()).collect();
    config.admission =
        apiary_api::admission::PluginSelection::new(&enable, &[]).expect("known plugins");
    let app = apiary_api::router(storage.clone(), config);
    for ns in ["a", "b"] {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        created(&app, "/api/v1/namespaces", &body.to_string()).await;
    }
    (app, storage, rbac)
}

/// Waits until this replica's RBAC index has every write made so far.
pub(super) async fn settled(storage: &Backend, rbac: &RbacAuthorizer) {
    rbac.wait_for(storage.revision().await).await;
}

/// A certificate user `cn` in `org`.
pub(super) fn user(cn: &str, org: &str) -> ClientCertificate {
    ClientCertificate::new(cert(cn, Some(org)))
}

pub(super) fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn role_body(kind: &str, name: &str, rules: Vec<Value>) -> String {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": kind, "metadata": {"name": name}, "rules": rules})
        .to_string()
}

fn binding_body(kind: &str, name: &str, role_kind: &str, role: &str, subject: Value) -> String {
    json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": kind, "metadata": {"name": name},
        "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": role},
        "subjects": [subject],
    })
    .to_string()
}

fn user_subject(name: &str) -> Value {
    json!({"kind": "User", "apiGroup": GROUP, "name": name})
}

/// Creates, as the admin, the Role `name` in `ns` with `rules` and binds it to the user.
pub(super) async fn grant_in(app: &Router, ns: &str, name: &str, who: &str, rules: Vec<Value>) {
    created(
        app,
        &format!("{RBAC}/namespaces/{ns}/roles"),
        &role_body("Role", name, rules),
    )
    .await;
    let binding = binding_body("RoleBinding", name, "Role", name, user_subject(who));
    created(
        app,
        &format!("{RBAC}/namespaces/{ns}/rolebindings"),
        &binding,
    )
    .await;
}

/// Creates, as the admin, the ClusterRole `name` with `rules` and binds it cluster-wide to
/// `subject`.
async fn grant_cluster(app: &Router, name: &str, subject: Value, rules: Vec<Value>) {
    created(
        app,
        &format!("{RBAC}/clusterroles"),
        &role_body("ClusterRole", name, rules),
    )
    .await;
    let binding = binding_body("ClusterRoleBinding", name, "ClusterRole", name, subject);
    created(app, &format!("{RBAC}/clusterrolebindings"), &binding).await;
}

// R-ACC-177, R-ACC-178, R-ACC-097, R-ACC-110: a RoleBinding grants in its namespace only, a
// ClusterRoleBinding everywhere (here to a group); what is not granted is a 403 worded as
// Kubernetes words it.
#[tokio::test]
async fn bindings_grant_their_rules_where_they_are() {
    let (app, storage, rbac) = rbac_app().await;
    let carl = || Some(user("carl", "dev"));
    for ns in ["a", "b"] {
        created(
            &app,
            &format!("/api/v1/namespaces/{ns}/configmaps"),
            &cm("c"),
        )
        .await;
    }
    let before = call(
        &app,
        "GET",
        "/api/v1/namespaces/a/configmaps/c",
        None,
        carl(),
    )
    .await;
    assert_status(&before, 403, "Forbidden");
    grant_in(
        &app,
        "a",
        "cm-reader",
        "carl",
        vec![rule(&[""], &["configmaps"], &["get", "list"])],
    )
    .await;
    grant_cluster(
        &app,
        "pod-lister",
        json!({"kind": "Group", "apiGroup": GROUP, "name": "dev"}),
        vec![rule(&[""], &["pods"], &["list"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let read = call(
        &app,
        "GET",
        "/api/v1/namespaces/a/configmaps/c",
        None,
        carl(),
    )
    .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text());
    let listed = call(&app, "GET", "/api/v1/namespaces/a/configmaps", None, carl()).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
    let pods = call(&app, "GET", "/api/v1/pods", None, carl()).await;
    assert_eq!(pods.status, StatusCode::OK, "{}", pods.text());
    let other = call(
        &app,
        "GET",
        "/api/v1/namespaces/b/configmaps/c",
        None,
        carl(),
    )
    .await;
    let s = assert_status(&other, 403, "Forbidden");
    assert_eq!(
        s["message"],
        r#"configmaps "c" is forbidden: User "carl" cannot get resource "configmaps" in API group "" in the namespace "b""#
    );
    assert_eq!(s["details"]["name"], "c");
    assert_eq!(s["details"]["kind"], "configmaps");
    let write = call(
        &app,
        "DELETE",
        "/api/v1/namespaces/a/configmaps/c",
        None,
        carl(),
    )
    .await;
    assert_status(&write, 403, "Forbidden");
    let all = call(&app, "GET", "/api/v1/configmaps", None, carl()).await;
    let s = assert_status(&all, 403, "Forbidden");
    assert_eq!(
        s["message"],
        r#"configmaps is forbidden: User "carl" cannot list resource "configmaps" in API group "" at the cluster scope"#
    );
    // Another user of the same group gets the group's grant, not carl's own.
    let dora = || Some(user("dora", "dev"));
    assert_eq!(
        call(&app, "GET", "/api/v1/pods", None, dora()).await.status,
        StatusCode::OK
    );
    let theirs = call(
        &app,
        "GET",
        "/api/v1/namespaces/a/configmaps/c",
        None,
        dora(),
    )
    .await;
    assert_status(&theirs, 403, "Forbidden");
    // Removing the binding takes the grant away.
    let gone = admin_call(
        &app,
        "DELETE",
        &format!("{RBAC}/namespaces/a/rolebindings/cm-reader"),
        None,
    )
    .await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.text());
    settled(&storage, &rbac).await;
    let after = call(
        &app,
        "GET",
        "/api/v1/namespaces/a/configmaps/c",
        None,
        carl(),
    )
    .await;
    assert_status(&after, 403, "Forbidden");
}

// R-ACC-109, R-ACC-110: resourceNames limit reads to the named object; a list needs the
// name's field selector.
#[tokio::test]
async fn resource_names_limit_to_the_named_objects() {
    let (app, storage, rbac) = rbac_app().await;
    let eve = || Some(user("eve", "team"));
    for name in ["mine", "theirs"] {
        created(&app, "/api/v1/namespaces/a/configmaps", &cm(name)).await;
    }
    let named = json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["mine"],
        "verbs": ["get", "list", "create", "deletecollection"]});
    grant_in(&app, "a", "only-mine", "eve", vec![named]).await;
    settled(&storage, &rbac).await;
    let base = "/api/v1/namespaces/a/configmaps";
    assert_eq!(
        call(&app, "GET", &format!("{base}/mine"), None, eve())
            .await
            .status,
        StatusCode::OK
    );
    assert_status(
        &call(&app, "GET", &format!("{base}/theirs"), None, eve()).await,
        403,
        "Forbidden",
    );
    assert_status(
        &call(&app, "GET", base, None, eve()).await,
        403,
        "Forbidden",
    );
    let pinned = call(
        &app,
        "GET",
        &format!("{base}?fieldSelector=metadata.name%3Dmine"),
        None,
        eve(),
    )
    .await;
    assert_eq!(pinned.status, StatusCode::OK, "{}", pinned.text());
    let names: Vec<Value> = pinned.json()["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].clone())
        .collect();
    assert_eq!(names, [json!("mine")]);
    let other = call(
        &app,
        "GET",
        &format!("{base}?fieldSelector=metadata.name%3Dtheirs"),
        None,
        eve(),
    )
    .await;
    assert_status(&other, 403, "Forbidden");
    assert_status(
        &call(&app, "POST", base, Some(&cm("mine2")), eve()).await,
        403,
        "Forbidden",
    );
    assert_status(
        &call(&app, "DELETE", base, None, eve()).await,
        403,
        "Forbidden",
    );
}

// R-ACC-098, R-ACC-148: non-resource paths are granted by nonResourceURLs (with a `*`
// suffix); a grant to the user `*` covers neither other users nor anonymous callers.
#[tokio::test]
async fn paths_and_star_subjects() {
    let (app, storage, rbac) = rbac_app().await;
    let urls = json!({"nonResourceURLs": ["/version", "/apis/*"], "verbs": ["get"]});
    grant_cluster(&app, "paths", user_subject("fay"), vec![urls]).await;
    grant_cluster(
        &app,
        "star",
        user_subject("*"),
        vec![rule(&[""], &["namespaces"], &["list"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let fay = || Some(user("fay", "team"));
    assert_eq!(
        call(&app, "GET", "/apis", None, fay()).await.status,
        StatusCode::FORBIDDEN
    );
    let group = call(&app, "GET", "/apis/apps", None, fay()).await;
    assert_eq!(group.status, StatusCode::OK, "{}", group.text());
    let api = call(&app, "GET", "/api", None, fay()).await;
    let s = assert_status(&api, 403, "Forbidden");
    assert_eq!(
        s["message"],
        r#"forbidden: User "fay" cannot get path "/api""#
    );
    assert_status(
        &call(&app, "GET", "/api/v1/namespaces", None, fay()).await,
        403,
        "Forbidden",
    );
    assert_status(
        &call(&app, "GET", "/api/v1/namespaces", None, None).await,
        403,
        "Forbidden",
    );
}

// R-ACC-177: a binding to a missing role grants nothing; the 403 says why, as Kubernetes'.
#[tokio::test]
async fn missing_roles_are_the_reason() {
    let (app, storage, rbac) = rbac_app().await;
    let binding = binding_body(
        "RoleBinding",
        "ghost",
        "ClusterRole",
        "ghost",
        user_subject("gus"),
    );
    created(&app, &format!("{RBAC}/namespaces/a/rolebindings"), &binding).await;
    settled(&storage, &rbac).await;
    let reply = call(
        &app,
        "GET",
        "/api/v1/namespaces/a/pods",
        None,
        Some(user("gus", "team")),
    )
    .await;
    let s = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        s["message"],
        format!(
            r#"pods is forbidden: User "gus" cannot list resource "pods" in API group "" in the namespace "a": RBAC: clusterrole.{GROUP} "ghost" not found"#
        )
    );
}

// R-ACC-180, R-ACC-108: a role is stored only with every permission it grants held at its
// scope, or with `escalate`; the refusal names what is missing.
#[tokio::test]
async fn roles_cannot_escalate() {
    let (app, storage, rbac) = rbac_app().await;
    let hal = || Some(user("hal", "team"));
    grant_in(
        &app,
        "a",
        "role-writer",
        "hal",
        vec![
            rule(&[GROUP], &["roles"], &["create", "update", "patch"]),
            rule(&[""], &["configmaps"], &["get", "list"]),
        ],
    )
    .await;
    settled(&storage, &rbac).await;
    let roles = format!("{RBAC}/namespaces/a/roles");
    let held = role_body(
        "Role",
        "reader",
        vec![rule(&[""], &["configmaps"], &["get"])],
    );
    let ok = call(&app, "POST", &roles, Some(&held), hal()).await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.text());
    let more = role_body(
        "Role",
        "writer",
        vec![
            rule(&[""], &["configmaps"], &["get", "delete"]),
            rule(&[""], &["secrets"], &["get"]),
        ],
    );
    let refused = call(&app, "POST", &roles, Some(&more), hal()).await;
    let s = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        s["message"],
        format!(
            "roles.{GROUP} \"writer\" is forbidden: user \"hal\" (groups=[\"team\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"delete\"]}}\n{{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}}"
        )
    );
    // An update and a patch are weighed on the object they would store; a dry run too.
    let mut update: Value = serde_json::from_str(&more).expect("json");
    update["metadata"]["name"] = json!("reader");
    let path = format!("{roles}/reader");
    assert_status(
        &call(&app, "PUT", &path, Some(&update.to_string()), hal()).await,
        403,
        "Forbidden",
    );
    let patch = json!({"rules": [rule(&[""], &["secrets"], &["get"])]}).to_string();
    let mut req = Request::builder()
        .method("PATCH")
        .uri(&path)
        .header("content-type", "application/merge-patch+json")
        .body(Body::from(patch))
        .expect("request");
    req.extensions_mut().insert(user("hal", "team"));
    assert_status(&send(&app, req).await, 403, "Forbidden");
    let dry = call(
        &app,
        "POST",
        &format!("{roles}?dryRun=All"),
        Some(&more),
        hal(),
    )
    .await;
    assert_status(&dry, 403, "Forbidden");
    // The same role elsewhere needs the permissions there.
    let elsewhere = call(
        &app,
        "POST",
        &format!("{RBAC}/namespaces/b/roles"),
        Some(&held),
        hal(),
    )
    .await;
    assert_status(&elsewhere, 403, "Forbidden");
    // `escalate` lifts the check.
    grant_in(
        &app,
        "a",
        "escalator",
        "hal",
        vec![rule(&[GROUP], &["roles"], &["escalate"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let ok = call(&app, "POST", &roles, Some(&more), hal()).await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.text());
}

// R-ACC-180: setting an aggregationRule needs every permission, or `escalate`.
#[tokio::test]
async fn aggregation_rules_need_full_authority() {
    let (app, storage, rbac) = rbac_app().await;
    grant_cluster(
        &app,
        "cr-writer",
        user_subject("ida"),
        vec![rule(&[GROUP], &["clusterroles"], &["create"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let body = json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": "ClusterRole", "metadata": {"name": "agg"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
    })
    .to_string();
    let path = format!("{RBAC}/clusterroles");
    let refused = call(&app, "POST", &path, Some(&body), Some(user("ida", "team"))).await;
    let s = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        s["message"],
        format!(
            r#"clusterroles.{GROUP} "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule"#
        )
    );
    let plain = role_body("ClusterRole", "empty", Vec::new());
    let ok = call(&app, "POST", &path, Some(&plain), Some(user("ida", "team"))).await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.text());
    assert_eq!(
        admin_call(&app, "POST", &path, Some(&body)).await.status,
        StatusCode::CREATED
    );
}

// R-ACC-181, R-ACC-108: a binding is stored only with the role's permissions held or `bind`
// on that role (by name); a missing role is a 404.
#[tokio::test]
async fn bindings_cannot_escalate() {
    let (app, storage, rbac) = rbac_app().await;
    let jo = || Some(user("jo", "team"));
    grant_in(
        &app,
        "a",
        "binder",
        "jo",
        vec![
            rule(&[GROUP], &["rolebindings"], &["create", "update"]),
            rule(&[""], &["pods"], &["get"]),
        ],
    )
    .await;
    created(
        &app,
        &format!("{RBAC}/clusterroles"),
        &role_body(
            "ClusterRole",
            "pod-getter",
            vec![rule(&[""], &["pods"], &["get"])],
        ),
    )
    .await;
    created(
        &app,
        &format!("{RBAC}/clusterroles"),
        &role_body(
            "ClusterRole",
            "secret-getter",
            vec![rule(&[""], &["secrets"], &["get"])],
        ),
    )
    .await;
    settled(&storage, &rbac).await;
    let path = format!("{RBAC}/namespaces/a/rolebindings");
    let held = binding_body(
        "RoleBinding",
        "b1",
        "ClusterRole",
        "pod-getter",
        user_subject("kim"),
    );
    let ok = call(&app, "POST", &path, Some(&held), jo()).await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.text());
    let more = binding_body(
        "RoleBinding",
        "b2",
        "ClusterRole",
        "secret-getter",
        user_subject("kim"),
    );
    let refused = call(&app, "POST", &path, Some(&more), jo()).await;
    let s = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        s["message"],
        format!(
            "rolebindings.{GROUP} \"b2\" is forbidden: user \"jo\" (groups=[\"team\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}}"
        )
    );
    let missing = binding_body(
        "RoleBinding",
        "b3",
        "ClusterRole",
        "nowhere",
        user_subject("kim"),
    );
    assert_status(
        &call(&app, "POST", &path, Some(&missing), jo()).await,
        404,
        "NotFound",
    );
    // The same binding in another namespace needs the permissions there.
    let other = call(
        &app,
        "POST",
        &format!("{RBAC}/namespaces/b/rolebindings"),
        Some(&held),
        jo(),
    )
    .await;
    assert_status(&other, 403, "Forbidden");
    // `bind` on that role by name.
    let bind = json!({"apiGroups": [GROUP], "resources": ["clusterroles"], "resourceNames": ["secret-getter"], "verbs": ["bind"]});
    grant_in(&app, "a", "bind-secret-getter", "jo", vec![bind]).await;
    settled(&storage, &rbac).await;
    let ok = call(&app, "POST", &path, Some(&more), jo()).await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.text());
    assert_status(
        &call(&app, "POST", &path, Some(&missing), jo()).await,
        404,
        "NotFound",
    );
    // Kim got exactly the bound roles' rules in `a`.
    settled(&storage, &rbac).await;
    created(
        &app,
        "/api/v1/namespaces/a/secrets",
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}).to_string(),
    )
    .await;
    let kim = call(
        &app,
        "GET",
        "/api/v1/namespaces/a/secrets/s",
        None,
        Some(user("kim", "team")),
    )
    .await;
    assert_eq!(kim.status, StatusCode::OK, "{}", kim.text());
}

// R-ACC-179: a binding's roleRef cannot change, by update or patch (422); other fields can.
#[tokio::test]
async fn role_ref_is_immutable() {
    let (app, _, _) = rbac_app().await;
    let path = format!("{RBAC}/namespaces/a/rolebindings");
    let binding = binding_body(
        "RoleBinding",
        "rb",
        "ClusterRole",
        "view",
        user_subject("lee"),
    );
    created(&app, &path, &binding).await;
    let mut changed: Value = serde_json::from_str(&binding).expect("json");
    changed["roleRef"]["name"] = json!("edit");
    let reply = admin_call(
        &app,
        "PUT",
        &format!("{path}/rb"),
        Some(&changed.to_string()),
    )
    .await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        s["message"],
        format!(
            r#"RoleBinding.{GROUP} "rb" is invalid: roleRef: Invalid value: {{"apiGroup":"{GROUP}","kind":"ClusterRole","name":"edit"}}: cannot change roleRef"#
        )
    );
    let patch = json!({"roleRef": {"kind": "Role"}}).to_string();
    let reply = send_as(
        &app,
        "PATCH",
        &format!("{path}/rb"),
        "application/merge-patch+json",
        &patch,
    )
    .await;
    assert_status(&reply, 422, "Invalid");
    let mut subjects: Value = serde_json::from_str(&binding).expect("json");
    subjects["subjects"] = json!([user_subject("max")]);
    let ok = admin_call(
        &app,
        "PUT",
        &format!("{path}/rb"),
        Some(&subjects.to_string()),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text());
}

// R-ACC-180, R-ACC-181: names are path segments (`system:` names are fine), rules and
// subjects are validated, and unset API groups are defaulted.
#[tokio::test]
async fn rbac_objects_are_validated() {
    let (app, _, _) = rbac_app().await;
    let colon = role_body(
        "ClusterRole",
        "system:controller:x",
        vec![rule(&[""], &["pods"], &["get"])],
    );
    created(&app, &format!("{RBAC}/clusterroles"), &colon).await;
    let urls = role_body(
        "Role",
        "r",
        vec![json!({"nonResourceURLs": ["/x"], "verbs": ["get"]})],
    );
    let reply = admin_call(
        &app,
        "POST",
        &format!("{RBAC}/namespaces/a/roles"),
        Some(&urls),
    )
    .await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        s["details"]["causes"][0]["field"],
        "rules[0].nonResourceURLs"
    );
    let binding = json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": "ClusterRoleBinding", "metadata": {"name": "crb"},
        "roleRef": {"kind": "ClusterRole", "name": "system:controller:x"},
        "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "s", "namespace": "a"}],
    });
    let stored = created(
        &app,
        &format!("{RBAC}/clusterrolebindings"),
        &binding.to_string(),
    )
    .await;
    assert_eq!(stored["roleRef"]["apiGroup"], GROUP);
    assert_eq!(stored["subjects"][0]["apiGroup"], GROUP);
    assert!(
        stored["subjects"][1]
            .get("apiGroup")
            .is_none_or(|g| g == "")
    );
}

// R-ACC-097: the reviews answer from RBAC: can-i for a granted and a refused request, and
// the rules RBAC grants in a namespace.
#[tokio::test]
async fn reviews_answer_from_rbac() {
    let (app, storage, rbac) = rbac_app().await;
    grant_in(
        &app,
        "a",
        "reader",
        "ned",
        vec![rule(&[""], &["pods"], &["get", "list"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let authz = "/apis/authorization.k8s.io/v1";
    let ned = || Some(user("ned", "team"));
    let review = |ns: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": ns}}})
        .to_string()
    };
    let yes = call(
        &app,
        "POST",
        &format!("{authz}/selfsubjectaccessreviews"),
        Some(&review("a")),
        ned(),
    )
    .await;
    assert_eq!(yes.json()["status"]["allowed"], true, "{}", yes.text());
    let no = call(
        &app,
        "POST",
        &format!("{authz}/selfsubjectaccessreviews"),
        Some(&review("b")),
        ned(),
    )
    .await;
    assert_eq!(no.json()["status"]["allowed"], false, "{}", no.text());
    let rules = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "a"}}).to_string();
    let listed = call(
        &app,
        "POST",
        &format!("{authz}/selfsubjectrulesreviews"),
        Some(&rules),
        ned(),
    )
    .await;
    assert_eq!(listed.status, StatusCode::CREATED, "{}", listed.text());
    let resource_rules = listed.json()["status"]["resourceRules"].clone();
    assert!(
        resource_rules
            .as_array()
            .expect("rules")
            .contains(&json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})),
        "{resource_rules}"
    );
    let sar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "ned", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "a", "name": "p"}}}).to_string();
    let asked = admin_call(
        &app,
        "POST",
        &format!("{authz}/subjectaccessreviews"),
        Some(&sar),
    )
    .await;
    assert_eq!(asked.json()["status"]["allowed"], true, "{}", asked.text());
}

// R-ACC-107, R-ACC-154, R-ACC-155, R-ACC-156, R-ACC-157: `impersonate` reaches RBAC as a
// verb on users (limited by name) and groups; the request then runs as the impersonated user.
#[tokio::test]
async fn impersonation_is_granted_by_rbac() {
    let (app, storage, rbac) = rbac_app().await;
    let impersonate = json!({"apiGroups": [""], "resources": ["users"], "resourceNames": ["jane"], "verbs": ["impersonate"]});
    grant_cluster(
        &app,
        "as-jane",
        user_subject("otto"),
        vec![impersonate, rule(&[""], &["groups"], &["impersonate"])],
    )
    .await;
    grant_cluster(
        &app,
        "jane-reads",
        user_subject("jane"),
        vec![rule(&[""], &["namespaces"], &["get"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let as_user = |target: &str| {
        let mut req = Request::builder()
            .uri("/api/v1/namespaces/a")
            .header("Impersonate-User", target)
            .header("Impersonate-Group", "readers")
            .body(Body::empty())
            .expect("request");
        req.extensions_mut().insert(user("otto", "team"));
        req
    };
    let jane = send(&app, as_user("jane")).await;
    assert_eq!(jane.status, StatusCode::OK, "{}", jane.text());
    let john = send(&app, as_user("john")).await;
    let s = assert_status(&john, 403, "Forbidden");
    let message = s["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(r#"User "otto" cannot impersonate"#),
        "{message}"
    );
    let direct = call(
        &app,
        "GET",
        "/api/v1/namespaces/a",
        None,
        Some(user("otto", "team")),
    )
    .await;
    assert_status(&direct, 403, "Forbidden");
}

// R-ACC-111: list and watch return full objects, so they reveal what get would.
#[tokio::test]
async fn list_and_watch_reveal_contents() {
    let (app, storage, rbac) = rbac_app().await;
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "hidden"}});
    created(&app, "/api/v1/namespaces/a/secrets", &secret.to_string()).await;
    grant_in(
        &app,
        "a",
        "secret-lister",
        "pat",
        vec![rule(&[""], &["secrets"], &["list", "watch"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let pat = || Some(user("pat", "team"));
    assert_status(
        &call(&app, "GET", "/api/v1/namespaces/a/secrets/s", None, pat()).await,
        403,
        "Forbidden",
    );
    let listed = call(&app, "GET", "/api/v1/namespaces/a/secrets", None, pat()).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
    assert_eq!(listed.json()["items"][0]["data"]["k"], "aGlkZGVu");
    let watched = call(
        &app,
        "GET",
        "/api/v1/namespaces/a/secrets?watch=1&timeoutSeconds=1",
        None,
        pat(),
    )
    .await;
    assert_eq!(watched.status, StatusCode::OK, "{}", watched.text());
    assert!(watched.text().contains("aGlkZGVu"), "{}", watched.text());
}
