//! The versions of a custom resource over time: a version added is served over the objects
//! already stored; objects stay stored in the version they were written in, so after the
//! definition's storage version changes, every served version still reads the old objects (in its own apiVersion: get, list, watch), new and updated
//! objects are stored in the new storage version, and `status.storedVersions` lists both.

use std::time::Duration;

use apiary_api::registry::StoredJson;
use serde_json::Value;
use serde_json::json;

use super::custom_resources::WIDGETS;
use super::custom_resources::crds;
use super::custom_resources::merge_patch;
use super::custom_resources::serve;
use super::custom_resources::widget;
use super::custom_resources::widgets_where;
use super::watch::Watch;
use super::*;

const BETA: &str = "/apis/stable.example.com/v1beta1/namespaces/default/widgets";

/// The apiVersion widget `name` is stored in.
async fn stored_version(storage: &Backend, name: &str) -> String {
    let key = format!("/registry/stable.example.com/widgets/default/{name}");
    let found = storage
        .get(&key, ReadConsistency::Linearizable)
        .await
        .expect("get")
        .expect("stored");
    let obj = StoredJson::from_stored(found.value)
        .and_then(|s| s.to_value())
        .expect("stored JSON");
    obj["apiVersion"].as_str().unwrap_or_default().to_owned()
}

// CHECKLIST: R-VER-074 (objects stored in an older version are still read).
#[tokio::test]
async fn objects_stay_readable_in_every_version_after_the_storage_version_changes() {
    let flavor = Flavor::Kubernetes;
    let (app, storage) = app_in(flavor).await;
    serve(&app, flavor, &widgets_where(flavor, |_, _| {})).await;
    created(&app, WIDGETS, &widget("old", 1)).await;
    assert_eq!(
        stored_version(&storage, "old").await,
        "stable.example.com/v1"
    );

    // v1beta1 becomes the storage version, and gets a default that tells when the table
    // has the new generation; a new version v2 is added.
    let path = format!("{}/widgets.stable.example.com", crds(flavor));
    let mut crd = fetched(&app, &path).await;
    let versions = crd["spec"]["versions"].as_array_mut().expect("versions");
    let mut v2 = versions[1].clone();
    v2["name"] = "v2".into();
    v2["storage"] = false.into();
    versions.push(v2);
    for version in versions {
        let beta = version["name"] == "v1beta1";
        version["storage"] = beta.into();
        if beta {
            version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["color"] =
                json!({"type": "string", "default": "blue"});
        }
    }
    let replaced = admin_call(&app, "PUT", &path, Some(&crd.to_string())).await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.text());
    assert_eq!(
        replaced.json()["status"]["storedVersions"],
        json!(["v1", "v1beta1"])
    );
    let probe = widget("probe", 1).replace("/v1\"", "/v1beta1\"");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let dry = admin_call(&app, "POST", &format!("{BETA}?dryRun=All"), Some(&probe)).await;
        if dry.json()["spec"]["color"] == "blue" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not rebuilt: {}",
            dry.text()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The old object, stored as v1, in each version's own apiVersion.
    let beta = fetched(&app, &format!("{BETA}/old")).await;
    assert_eq!(beta["apiVersion"], "stable.example.com/v1beta1");
    assert_eq!(beta["spec"]["size"], 1);
    let v1 = fetched(&app, &format!("{WIDGETS}/old")).await;
    assert_eq!(v1["apiVersion"], "stable.example.com/v1");
    let added = "/apis/stable.example.com/v2/namespaces/default/widgets/old";
    assert_eq!(
        fetched(&app, added).await["apiVersion"],
        "stable.example.com/v2"
    );
    let listed = fetched(&app, BETA).await;
    let versions: Vec<&Value> = (listed["items"].as_array().into_iter().flatten())
        .map(|i| &i["apiVersion"])
        .collect();
    assert_eq!(versions, [&json!("stable.example.com/v1beta1")]);
    let mut watch = Watch::open(&app, &format!("{BETA}?watch=true&resourceVersion=0")).await;
    let added = watch.next().await;
    assert_eq!(added["object"]["apiVersion"], "stable.example.com/v1beta1");
    assert_eq!(added["object"]["metadata"]["name"], "old");

    // New objects are stored in the new storage version, whichever version wrote them; an
    // old object moves to it when it is written.
    created(&app, WIDGETS, &widget("new", 2)).await;
    assert_eq!(
        stored_version(&storage, "new").await,
        "stable.example.com/v1beta1"
    );
    let patched = merge_patch(&app, &format!("{WIDGETS}/old"), r#"{"spec":{"size":3}}"#).await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text());
    assert_eq!(patched.json()["apiVersion"], "stable.example.com/v1");
    assert_eq!(
        stored_version(&storage, "old").await,
        "stable.example.com/v1beta1"
    );
    let added = watch.next().await;
    assert_eq!(added["type"], "ADDED", "{added}");
    assert_eq!(added["object"]["metadata"]["name"], "new");
    let modified = watch.next().await;
    assert_eq!(modified["type"], "MODIFIED");
    assert_eq!(
        modified["object"]["apiVersion"],
        "stable.example.com/v1beta1"
    );
    assert_eq!(modified["object"]["spec"]["size"], 3);
}
