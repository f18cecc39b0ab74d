//! The answers of DELETE as Kubernetes' generic store gives them: the garbage collector's
//! finalizers that `propagationPolicy`, `orphanDependents` and each kind's default policy
//! leave, 202 for `orphanDependents: false`, graceful deletion of pods (a deletionTimestamp
//! in the future that later deletes may only bring forward), and the kinds that answer the
//! deleted object rather than a `Status`.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;

use super::*;

const PODS: &str = "/api/v1/namespaces/default/pods";

/// A ConfigMap `name` held by the finalizer `example.com/hold`.
fn held(name: &str) -> String {
    json!({"metadata": {"name": name, "finalizers": ["example.com/hold"]}}).to_string()
}

fn finalizers(obj: &Value) -> Vec<&str> {
    obj["metadata"]["finalizers"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn time(obj: &Value, field: &str) -> DateTime<Utc> {
    let text = obj["metadata"][field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field}: {obj}"));
    DateTime::parse_from_rfc3339(text)
        .expect("an RFC 3339 time")
        .with_timezone(&Utc)
}

async fn delete(app: &Router, path: &str, options: Value) -> Reply {
    admin_call(app, "DELETE", path, Some(&options.to_string())).await
}

// R-RES-049, R-RES-054, R-RES-060, R-RES-092: Foreground and Orphan leave the garbage
// collector's finalizer on the object, which stays marked and is answered; Background
// removes an object nothing holds at once.
#[tokio::test]
async fn propagation_policies_leave_the_garbage_collectors_finalizers() {
    let (app, _) = app().await;
    for (name, policy, finalizer) in [
        ("fg", "Foreground", "foregroundDeletion"),
        ("or", "Orphan", "orphan"),
    ] {
        created(&app, CM_PATH, &cm(name)).await;
        let path = format!("{CM_PATH}/{name}");
        let reply = delete(&app, &path, json!({"propagationPolicy": policy})).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let obj = reply.json();
        assert_eq!(obj["kind"], "ConfigMap", "{obj}");
        assert_eq!(finalizers(&obj), [finalizer], "{obj}");
        assert_eq!(obj["metadata"]["deletionGracePeriodSeconds"], 0, "{obj}");
        time(&obj, "deletionTimestamp");
        assert_eq!(fetched(&app, &path).await, obj);
    }
    created(&app, CM_PATH, &cm("bg")).await;
    let path = format!("{CM_PATH}/bg");
    let reply = delete(&app, &path, json!({"propagationPolicy": "Background"})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["kind"], "Status");
    assert_status(&admin_call(&app, "GET", &path, None).await, 404, "NotFound");
}

// R-RES-053, R-RES-092: the deprecated orphanDependents; `false` on an object that is not
// removed at once answers 202, and the query form works as the body does.
#[tokio::test]
async fn orphan_dependents_false_answers_accepted_while_the_object_stays() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &held("kept")).await;
    let path = format!("{CM_PATH}/kept");
    let reply = delete(&app, &path, json!({"orphanDependents": false})).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text());
    assert_eq!(finalizers(&reply.json()), ["example.com/hold"]);

    created(&app, CM_PATH, &cm("gone")).await;
    let reply = admin_call(
        &app,
        "DELETE",
        &format!("{CM_PATH}/gone?orphanDependents=false"),
        None,
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "removed at once: {}",
        reply.text()
    );

    created(&app, CM_PATH, &cm("orphaned")).await;
    let reply = admin_call(
        &app,
        "DELETE",
        &format!("{CM_PATH}/orphaned?orphanDependents=true"),
        None,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(finalizers(&reply.json()), ["orphan"]);
}

// R-RES-060: the policy of a later delete replaces the garbage collector's finalizer of an
// earlier one (the object is not graceful, so its finalizers may still change), and the
// deletionTimestamp stays (R-RES-026).
#[tokio::test]
async fn a_later_policy_replaces_the_earlier_finalizer() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &held("p")).await;
    let path = format!("{CM_PATH}/p");
    let first = delete(&app, &path, json!({"propagationPolicy": "Foreground"}))
        .await
        .json();
    assert_eq!(
        finalizers(&first),
        ["example.com/hold", "foregroundDeletion"]
    );
    let second = delete(&app, &path, json!({"propagationPolicy": "Orphan"}))
        .await
        .json();
    assert_eq!(finalizers(&second), ["example.com/hold", "orphan"]);
    assert_eq!(
        second["metadata"]["deletionTimestamp"],
        first["metadata"]["deletionTimestamp"]
    );
    let third = delete(&app, &path, json!({})).await.json();
    assert_eq!(finalizers(&third), ["example.com/hold", "orphan"], "kept");
    assert_eq!(
        third["metadata"]["resourceVersion"],
        second["metadata"]["resourceVersion"]
    );
}

// Kubernetes' default policies: a ReplicationController and a batch/v1 Job orphan their
// dependents unless told otherwise; a Deployment's are deleted in the background. The
// first mark of an object with a generation moves its generation on.
#[tokio::test]
async fn kinds_that_orphan_by_default() {
    let (app, _) = app().await;
    let template = |restart: &str| {
        json!({"metadata": {"labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": restart}})
    };
    let rcs = "/api/v1/namespaces/default/replicationcontrollers";
    let rc = json!({"metadata": {"name": "rc"}, "spec": {"template": template("Always")}});
    let rc = created(&app, rcs, &rc.to_string()).await;
    let marked = delete(&app, &format!("{rcs}/rc"), json!({})).await.json();
    assert_eq!(finalizers(&marked), ["orphan"], "{marked}");
    assert_eq!(
        marked["metadata"]["generation"].as_i64(),
        rc["metadata"]["generation"].as_i64().map(|g| g + 1)
    );
    let jobs = "/apis/batch/v1/namespaces/default/jobs";
    let job = json!({"metadata": {"name": "j"}, "spec": {"template": template("Never")}});
    created(&app, jobs, &job.to_string()).await;
    let marked = delete(&app, &format!("{jobs}/j"), json!({})).await;
    assert_eq!(
        warnings(&marked),
        [
            "299 - \"child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning\""
        ]
    );
    let marked = marked.json();
    assert_eq!(finalizers(&marked), ["orphan"], "{marked}");
    let background = delete(
        &app,
        &format!("{jobs}/j"),
        json!({"propagationPolicy": "Background"}),
    )
    .await;
    assert_eq!(background.json()["kind"], "Status", "{}", background.text());
    assert!(warnings(&background).is_empty());

    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let deployment = json!({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "a"}},
        "template": {"metadata": {"labels": {"app": "a"}},
                     "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    created(&app, deployments, &deployment.to_string()).await;
    let removed = delete(&app, &format!("{deployments}/d"), json!({})).await;
    assert_eq!(removed.json()["kind"], "Status", "{}", removed.text());
}

/// A pod `name`, bound to `node` when given, with `grace` seconds of termination grace.
fn pod(name: &str, node: Option<&str>, grace: i64) -> String {
    let mut spec = json!({"containers": [{"name": "c", "image": "i"}],
                          "terminationGracePeriodSeconds": grace});
    if let Some(node) = node {
        spec["nodeName"] = node.into();
    }
    json!({"metadata": {"name": name}, "spec": spec}).to_string()
}

// R-RES-052, R-RES-062, R-RES-092: a bound pod is deleted gracefully — marked with
// deletionTimestamp = now + its grace period; a longer grace period changes nothing, a
// shorter one brings the timestamp forward; grace 0 removes it and answers the pod itself.
#[tokio::test]
async fn a_bound_pod_is_deleted_gracefully() {
    let (app, _) = app().await;
    created(&app, PODS, &pod("p", Some("n1"), 30)).await;
    let path = format!("{PODS}/p");
    let before = Utc::now();
    let marked = delete(&app, &path, json!({})).await;
    assert_eq!(marked.status, StatusCode::OK, "{}", marked.text());
    let marked = marked.json();
    assert_eq!(marked["kind"], "Pod");
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30);
    let at = time(&marked, "deletionTimestamp");
    let lead = (at - before).num_seconds();
    assert!((29..=31).contains(&lead), "deletionTimestamp {lead}s ahead");

    let longer = delete(&app, &path, json!({"gracePeriodSeconds": 60}))
        .await
        .json();
    assert_eq!(longer, marked, "a longer grace period changes nothing");
    let shorter = delete(&app, &path, json!({"gracePeriodSeconds": 10}))
        .await
        .json();
    assert_eq!(shorter["metadata"]["deletionGracePeriodSeconds"], 10);
    assert_eq!((at - time(&shorter, "deletionTimestamp")).num_seconds(), 20);

    // An update while the grace period runs keeps the pod.
    let mut status = fetched(&app, &path).await;
    status["status"]["phase"] = "Running".into();
    let updated = admin_call(
        &app,
        "PUT",
        &format!("{path}/status"),
        Some(&status.to_string()),
    )
    .await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    fetched(&app, &path).await;

    let gone = delete(&app, &path, json!({"gracePeriodSeconds": 0})).await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.text());
    let gone = gone.json();
    assert_eq!(
        gone["kind"], "Pod",
        "pods answer the deleted object: {gone}"
    );
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_status(&admin_call(&app, "GET", &path, None).await, 404, "NotFound");
}

// R-RES-062: a pod never bound to a node, or already terminated, goes at once.
#[tokio::test]
async fn an_unbound_pod_goes_at_once() {
    let (app, _) = app().await;
    created(&app, PODS, &pod("u", None, 30)).await;
    let gone = delete(&app, &format!("{PODS}/u"), json!({})).await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.text());
    assert_eq!(gone.json()["kind"], "Pod");
    assert_status(
        &admin_call(&app, "GET", &format!("{PODS}/u"), None).await,
        404,
        "NotFound",
    );
}

// R-RES-060, R-RES-061: a pod deleted with grace 0 but held by a finalizer stays marked and
// goes when its finalizer is removed.
#[tokio::test]
async fn a_force_deleted_pod_waits_for_its_finalizers() {
    let (app, _) = app().await;
    let mut body: Value = serde_json::from_str(&pod("f", Some("n1"), 30)).expect("json");
    body["metadata"]["finalizers"] = json!(["example.com/hold"]);
    created(&app, PODS, &body.to_string()).await;
    let path = format!("{PODS}/f");
    let marked = delete(&app, &path, json!({"gracePeriodSeconds": 0}))
        .await
        .json();
    assert_eq!(
        marked["metadata"]["deletionGracePeriodSeconds"], 0,
        "{marked}"
    );
    let mut release = fetched(&app, &path).await;
    release["metadata"]["finalizers"] = json!([]);
    let r = admin_call(&app, "PUT", &path, Some(&release.to_string())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_status(&admin_call(&app, "GET", &path, None).await, 404, "NotFound");
}

// R-RES-092: Services and ServiceAccounts answer the deleted object, ConfigMaps a Status.
#[tokio::test]
async fn some_kinds_answer_the_deleted_object() {
    let (app, _) = app().await;
    let sas = "/api/v1/namespaces/default/serviceaccounts";
    created(&app, sas, r#"{"metadata":{"name":"sa"}}"#).await;
    let reply = delete(&app, &format!("{sas}/sa"), json!({})).await.json();
    assert_eq!(reply["kind"], "ServiceAccount", "{reply}");
    assert_eq!(reply["metadata"]["name"], "sa");
    created(&app, CM_PATH, &cm("c")).await;
    let reply = delete(&app, &format!("{CM_PATH}/c"), json!({}))
        .await
        .json();
    assert_eq!(reply["kind"], "Status", "{reply}");
}

// R-RES-093: deletecollection deletes each selected item as a single delete with the same
// options would: here Foreground, so each item stays marked with the garbage collector's
// finalizer while an unselected one is untouched.
#[tokio::test]
async fn deletecollection_applies_the_options_to_each_item() {
    let (app, _) = app().await;
    for name in ["one", "two"] {
        let body = json!({"metadata": {"name": name, "labels": {"batch": "x"}}});
        created(&app, CM_PATH, &body.to_string()).await;
    }
    created(&app, CM_PATH, &cm("other")).await;
    let reply = admin_call(
        &app,
        "DELETE",
        &format!("{CM_PATH}?labelSelector=batch%3Dx&propagationPolicy=Foreground"),
        None,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["kind"], "ConfigMapList");
    for name in ["one", "two"] {
        let item = fetched(&app, &format!("{CM_PATH}/{name}")).await;
        assert_eq!(finalizers(&item), ["foregroundDeletion"], "{item}");
        time(&item, "deletionTimestamp");
    }
    let other = fetched(&app, &format!("{CM_PATH}/other")).await;
    assert!(
        other["metadata"].get("deletionTimestamp").is_none(),
        "{other}"
    );
}
