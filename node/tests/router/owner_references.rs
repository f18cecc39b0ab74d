//! The permissions owner references need (Kubernetes' `OwnerReferencesPermissionEnforcement`):
//! setting `blockOwnerDeletion=true` needs `update` on the owner's `finalizers`; changing the
//! references of an existing object needs `delete` on it; a create may set plain references.
//! The plugin is off unless enabled, as in Kubernetes.

use serde_json::Value;
use serde_json::json;

use super::rbac::grant_in;
use super::rbac::rbac_app;
use super::rbac::rbac_app_admitting;
use super::rbac::rule;
use super::rbac::settled;
use super::rbac::user;
use super::*;

const CMS: &str = "/api/v1/namespaces/a/configmaps";
const ENFORCE: &str = "OwnerReferencesPermissionEnforcement";

fn dependent(name: &str, owner: &Value, block: bool) -> String {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block,
        }]},
    })
    .to_string()
}

// blockOwnerDeletion=true on a new reference: 403 without `update` on the owner's
// `finalizers` subresource (worded as kube-apiserver words it), allowed with it; a plain
// reference needs nothing more than the create; an owner kind that is not served is refused.
#[tokio::test]
async fn blocking_an_owner_needs_update_on_its_finalizers() {
    let (app, storage, rbac) = rbac_app_admitting(&[ENFORCE]).await;
    let owner = created(&app, CMS, &cm("owner")).await;
    let carl = || Some(user("carl", "dev"));
    let verbs = ["create", "get", "update", "delete"];
    grant_in(
        &app,
        "a",
        "cm-writer",
        "carl",
        vec![rule(&[""], &["configmaps"], &verbs)],
    )
    .await;
    settled(&storage, &rbac).await;

    let blocked = call(
        &app,
        "POST",
        CMS,
        Some(&dependent("d1", &owner, true)),
        carl(),
    )
    .await;
    let status = assert_status(&blocked, 403, "Forbidden");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "configmaps \"d1\" is forbidden: cannot set blockOwnerDeletion if an \
             ownerReference refers to a resource you can't set finalizers on: "
        ) && message.ends_with(", <nil>"),
        "{message}"
    );
    let plain = call(
        &app,
        "POST",
        CMS,
        Some(&dependent("d2", &owner, false)),
        carl(),
    )
    .await;
    assert_eq!(plain.status, StatusCode::CREATED, "{}", plain.text());

    // Turning blockOwnerDeletion on in an update is the same check.
    let mut d2 = plain.json();
    d2["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = json!(true);
    let path = format!("{CMS}/d2");
    let turned = call(&app, "PUT", &path, Some(&d2.to_string()), carl()).await;
    assert_status(&turned, 403, "Forbidden");

    let mut ghost = serde_json::from_str::<Value>(&dependent("d3", &owner, true)).unwrap();
    ghost["metadata"]["ownerReferences"][0]["kind"] = json!("Nonesuch");
    let unmapped = call(&app, "POST", CMS, Some(&ghost.to_string()), carl()).await;
    let status = assert_status(&unmapped, 403, "Forbidden");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("cannot find RESTMapping for APIVersion v1 Kind Nonesuch"),
        "{status}"
    );

    let finalizers = rule(&[""], &["configmaps/finalizers"], &["update"]);
    grant_in(&app, "a", "cm-finalizers", "carl", vec![finalizers]).await;
    settled(&storage, &rbac).await;
    let allowed = call(
        &app,
        "POST",
        CMS,
        Some(&dependent("d1", &owner, true)),
        carl(),
    )
    .await;
    assert_eq!(allowed.status, StatusCode::CREATED, "{}", allowed.text());
    let turned = call(&app, "PUT", &path, Some(&d2.to_string()), carl()).await;
    assert_eq!(turned.status, StatusCode::OK, "{}", turned.text());
}

// Changing the references of an existing object needs `delete` on it; other changes do not.
#[tokio::test]
async fn changing_references_needs_delete_on_the_object() {
    let (app, storage, rbac) = rbac_app_admitting(&[ENFORCE]).await;
    let owner = created(&app, CMS, &cm("owner")).await;
    let dave = || Some(user("dave", "dev"));
    let verbs = ["create", "get", "update"];
    grant_in(
        &app,
        "a",
        "cm-editor",
        "dave",
        vec![rule(&[""], &["configmaps"], &verbs)],
    )
    .await;
    settled(&storage, &rbac).await;
    let made = call(&app, "POST", CMS, Some(&cm("x")), dave()).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    let mut x = made.json();
    x["data"] = json!({"a": "2"});
    let path = format!("{CMS}/x");
    let edited = call(&app, "PUT", &path, Some(&x.to_string()), dave()).await;
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.text());

    let mut owned: Value = serde_json::from_str(&dependent("x", &owner, false)).unwrap();
    owned["metadata"]["resourceVersion"] = edited.json()["metadata"]["resourceVersion"].clone();
    let refused = call(&app, "PUT", &path, Some(&owned.to_string()), dave()).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert!(
        status["message"].as_str().unwrap().starts_with(
            "configmaps \"x\" is forbidden: cannot set an ownerRef on a resource you can't delete: "
        ),
        "{status}"
    );
    grant_in(
        &app,
        "a",
        "cm-deleter",
        "dave",
        vec![rule(&[""], &["configmaps"], &["delete"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let allowed = call(&app, "PUT", &path, Some(&owned.to_string()), dave()).await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text());
}

// The plugin is not in Kubernetes' default set: without it, a user who may create and update
// configmaps sets blocking references and changes references freely.
#[tokio::test]
async fn without_the_plugin_references_need_no_more_permissions() {
    let (app, storage, rbac) = rbac_app().await;
    let owner = created(&app, CMS, &cm("owner")).await;
    let erin = || Some(user("erin", "dev"));
    let verbs = ["create", "get", "update"];
    grant_in(
        &app,
        "a",
        "cm-editor",
        "erin",
        vec![rule(&[""], &["configmaps"], &verbs)],
    )
    .await;
    settled(&storage, &rbac).await;
    let blocking = dependent("d", &owner, true);
    let made = call(&app, "POST", CMS, Some(&blocking), erin()).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    let mut changed = made.json();
    changed["metadata"]["ownerReferences"] = json!([]);
    let path = format!("{CMS}/d");
    let edited = call(&app, "PUT", &path, Some(&changed.to_string()), erin()).await;
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.text());
}
