//! Lists through the router: the resourceVersion table, pagination (limit, continue,
//! remainingItemCount, one snapshot per paged list), compaction (410) and revisions not yet
//! reached (504), and selectors per kind on list and deletecollection.

use axum::Router;
use http::StatusCode;
use serde_json::Value;

use super::Backend;
use super::Inspect;
use super::admin_call;
use super::app;
use super::app_on_replica;
use super::assert_status;
use apiary_api::flavor::Flavor;
use apiary_api::storage::Revision;

/// Percent-encodes what selectors and tokens put in a query value.
fn enc(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            ' ' | '=' | ',' | '(' | ')' | '!' | '/' | '&' | '+' => format!("%{:02X}", c as u8),
            c => c.to_string(),
        })
        .collect()
}

fn rv_of(v: &Value) -> Revision {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {v}"))
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {list}"))
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name").to_owned())
        .collect()
}

async fn post(app: &Router, path: &str, body: &str) -> Value {
    let r = admin_call(app, "POST", path, Some(body)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    r.json()
}

/// Creates namespace `ns` and, in it, a ConfigMap for each `(name, labels JSON)`; returns the
/// revision of each ConfigMap.
async fn config_maps(app: &Router, ns: &str, maps: &[(&str, &str)]) -> Vec<Revision> {
    post(
        app,
        "/api/v1/namespaces",
        &format!(r#"{{"metadata":{{"name":"{ns}"}}}}"#),
    )
    .await;
    let mut revisions = Vec::new();
    for (name, labels) in maps {
        let body = format!(r#"{{"metadata":{{"name":"{name}","labels":{labels}}}}}"#);
        let cm = post(app, &format!("/api/v1/namespaces/{ns}/configmaps"), &body).await;
        revisions.push(rv_of(&cm));
    }
    revisions
}

async fn list(app: &Router, path: &str) -> Value {
    let r = admin_call(app, "GET", path, None).await;
    assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text());
    r.json()
}

fn continue_of(list: &Value) -> Option<String> {
    list["metadata"]
        .get("continue")
        .map(|c| c.as_str().expect("string").to_owned())
}

const PAGES: &str = "/api/v1/namespaces/pages/configmaps";

/// Namespace `pages` with ConfigMaps a..e; returns the store and the revision after them.
async fn five(app: &Router, storage: &Backend) -> Revision {
    let maps = [
        ("a", r#"{"x":"1"}"#),
        ("b", r#"{"x":"2"}"#),
        ("c", r#"{"x":"1"}"#),
        ("d", r#"{"x":"2"}"#),
        ("e", r#"{"x":"1"}"#),
    ];
    config_maps(app, "pages", &maps).await;
    storage.revision().await
}

// R-RES-033, R-RES-141..146, R-RES-152, R-RES-155, R-RES-157, R-RES-158, R-RES-160,
// R-RES-161, R-RES-162..165: each cell of the list table serves the revision it promises.
#[tokio::test]
async fn resource_version_table() {
    let (app, storage) = app().await;
    let revs = config_maps(&app, "t", &[("a", "{}"), ("b", "{}")]).await;
    let (ra, rb) = (revs[0], revs[1]);
    let now = storage.revision().await;
    let path = "/api/v1/namespaces/t/configmaps";
    let current = [
        "",
        "?resourceVersion=0",
        &format!("?resourceVersion={ra}"),
        "?limit=5",
        "?limit=5&resourceVersion=0",
        "?resourceVersionMatch=NotOlderThan&resourceVersion=0",
        &format!("?resourceVersionMatch=NotOlderThan&resourceVersion={ra}"),
        "?resourceVersionMatch=NotOlderThan&resourceVersion=0&limit=5",
        &format!("?resourceVersionMatch=NotOlderThan&resourceVersion={ra}&limit=5"),
    ];
    for query in current {
        let l = list(&app, &format!("{path}{query}")).await;
        assert_eq!(rv_of(&l), now, "{query}: the newest revision");
        assert_eq!(names(&l), ["a", "b"], "{query}");
        assert_eq!(l["items"][1]["metadata"]["resourceVersion"], rb.to_string());
    }
    let exact = [
        format!("?limit=5&resourceVersion={ra}"),
        format!("?resourceVersionMatch=Exact&resourceVersion={ra}"),
        format!("?resourceVersionMatch=Exact&resourceVersion={ra}&limit=5"),
    ];
    for query in exact {
        let l = list(&app, &format!("{path}{query}")).await;
        assert_eq!(rv_of(&l), ra, "{query}: exactly the revision asked for");
        assert_eq!(names(&l), ["a"], "{query}: b did not exist yet");
    }
    let r = admin_call(&app, "GET", &format!("{path}?resourceVersion=x"), None).await;
    assert_status(&r, 400, "BadRequest");
}

// R-RES-100, R-RES-150, R-RES-151, R-RES-153, R-RES-154, R-RES-156, R-RES-159, R-RES-238:
// the combinations the table calls invalid are 422 Invalid ListOptions on the list path.
#[tokio::test]
async fn invalid_combinations_are_422() {
    let (app, _) = app().await;
    for query in [
        "resourceVersionMatch=Exact",
        "resourceVersionMatch=Exact&resourceVersion=0",
        "resourceVersionMatch=Exact&limit=2",
        "resourceVersionMatch=Exact&resourceVersion=0&limit=2",
        "resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch=NotOlderThan&limit=2",
    ] {
        let r = admin_call(&app, "GET", &format!("/api/v1/configmaps?{query}"), None).await;
        let s = assert_status(&r, 422, "Invalid");
        assert_eq!(s["details"]["kind"], "ListOptions", "{query}");
        assert_eq!(s["details"]["group"], "meta.k8s.io", "{query}");
    }
}

// R-RES-166, R-RES-168: Exact below the compaction point is 410 with Kubernetes' list
// message; Not older than a compacted revision is served at the newest revision, as
// Kubernetes' etcd storage does, and it is the pages after it that can no longer be served.
#[tokio::test]
async fn compacted_revisions() {
    let (app, storage, replica) = app_on_replica(Flavor::Kubernetes).await;
    let revs = config_maps(&app, "old", &[("a", "{}"), ("b", "{}")]).await;
    replica.compact(storage.revision().await);
    let path = "/api/v1/namespaces/old/configmaps";
    for query in [
        format!("resourceVersion={}&limit=1", revs[0]),
        format!("resourceVersionMatch=Exact&resourceVersion={}", revs[0]),
    ] {
        let r = admin_call(&app, "GET", &format!("{path}?{query}"), None).await;
        let s = assert_status(&r, 410, "Expired");
        assert_eq!(
            s["message"],
            "The resourceVersion for the provided list is too old."
        );
    }
    let not_older = format!(
        "{path}?resourceVersionMatch=NotOlderThan&resourceVersion={}&limit=1",
        revs[0]
    );
    let first = list(&app, &not_older).await;
    assert_eq!(rv_of(&first), storage.revision().await);
    assert_eq!(names(&first), ["a"]);
    let token = continue_of(&first).expect("more to come");
    post(
        &app,
        "/api/v1/namespaces/old/configmaps",
        r#"{"metadata":{"name":"c"}}"#,
    )
    .await;
    replica.compact(storage.revision().await);
    let r = admin_call(
        &app,
        "GET",
        &format!("{path}?limit=1&continue={token}"),
        None,
    )
    .await;
    assert_status(&r, 410, "Expired");
}

// R-RES-172: a get or a list at a revision the replica has not reached is 504 Timeout, as
// Kubernetes' NewTooLargeResourceVersionError.
#[tokio::test]
async fn revisions_not_reached_are_504() {
    let (app, storage) = app().await;
    config_maps(&app, "late", &[("a", "{}")]).await;
    let future = storage.revision().await + 100;
    for path in [
        format!("/api/v1/namespaces/late/configmaps/a?resourceVersion={future}"),
        format!("/api/v1/namespaces/late/configmaps?resourceVersion={future}"),
        format!("/api/v1/namespaces/late/configmaps?resourceVersion={future}&limit=1"),
        format!(
            "/api/v1/namespaces/late/configmaps?resourceVersionMatch=Exact&resourceVersion={future}"
        ),
    ] {
        let r = admin_call(&app, "GET", &path, None).await;
        let s = assert_status(&r, 504, "Timeout");
        let message = s["message"].as_str().expect("message");
        assert!(
            message.starts_with("Timeout: Too large resource version"),
            "{path}: {message}"
        );
        assert_eq!(
            s["details"]["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
        assert_eq!(
            r.headers.get("retry-after").map(|v| v.as_bytes()),
            Some(&b"1"[..])
        );
    }
}

// R-RES-034, R-RES-035, R-RES-101, R-RES-102, R-RES-147, R-RES-148, R-RES-182, R-RES-183:
// pages of at most `limit`, a token while more remain, the count of what remains, and a last
// page without `continue`.
#[tokio::test]
async fn pages_follow_tokens_to_the_end() {
    let (app, storage) = app().await;
    let revision = five(&app, &storage).await;
    let first = list(&app, &format!("{PAGES}?limit=2")).await;
    assert_eq!(names(&first), ["a", "b"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 3);
    let token = continue_of(&first).expect("more remain");
    let second = list(&app, &format!("{PAGES}?limit=2&continue={token}")).await;
    assert_eq!(names(&second), ["c", "d"]);
    assert_eq!(second["metadata"]["remainingItemCount"], 1);
    // R-RES-148: `resourceVersion=0` beside a token is tolerated; the token decides.
    let token = continue_of(&second).expect("more remain");
    let last = list(
        &app,
        &format!("{PAGES}?limit=2&continue={token}&resourceVersion=0"),
    )
    .await;
    assert_eq!(names(&last), ["e"]);
    assert!(last["metadata"].get("continue").is_none(), "{last}");
    assert!(
        last["metadata"].get("remainingItemCount").is_none(),
        "{last}"
    );
    for page in [&first, &second, &last] {
        assert_eq!(rv_of(page), revision);
    }
    let exact = list(&app, &format!("{PAGES}?limit=5")).await;
    assert!(exact["metadata"].get("continue").is_none(), "{exact}");
    assert!(exact["metadata"].get("remainingItemCount").is_none());
}

// R-RES-167, R-RES-184: every page is served at the first page's revision: writes after the
// first page do not show.
#[tokio::test]
async fn pages_are_one_snapshot() {
    let (app, storage) = app().await;
    let revision = five(&app, &storage).await;
    let first = list(&app, &format!("{PAGES}?limit=2")).await;
    let token = continue_of(&first).expect("more remain");
    post(&app, PAGES, r#"{"metadata":{"name":"cc"}}"#).await;
    let r = admin_call(&app, "DELETE", &format!("{PAGES}/d"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let second = list(&app, &format!("{PAGES}?limit=2&continue={token}")).await;
    assert_eq!(rv_of(&second), revision);
    assert_eq!(
        names(&second),
        ["c", "d"],
        "cc is newer, d was deleted later"
    );
    let fresh = list(&app, &format!("{PAGES}?limit=10")).await;
    assert_eq!(names(&fresh), ["a", "b", "c", "cc", "e"]);
    assert!(rv_of(&fresh) > revision);
}

// R-RES-036, R-RES-110, R-RES-182: with a selector, a page holds up to `limit` matching
// objects however many storage reads that takes, carries no remainingItemCount, and its
// token continues after the last object examined.
#[tokio::test]
async fn selective_pages() {
    let (app, storage) = app().await;
    let revision = five(&app, &storage).await;
    let q = format!("{PAGES}?limit=2&labelSelector={}", enc("x=1"));
    let first = list(&app, &q).await;
    assert_eq!(names(&first), ["a", "c"]);
    assert!(
        first["metadata"].get("remainingItemCount").is_none(),
        "{first}"
    );
    let token = continue_of(&first).expect("d and e are not examined yet");
    let second = list(&app, &format!("{q}&continue={token}")).await;
    assert_eq!(names(&second), ["e"]);
    assert!(second["metadata"].get("continue").is_none());
    assert_eq!(rv_of(&second), revision);
    let by_field = format!("{PAGES}?limit=1&fieldSelector={}", enc("metadata.name!=a"));
    let page = list(&app, &by_field).await;
    assert_eq!(names(&page), ["b"]);
    assert!(page["metadata"].get("remainingItemCount").is_none());
}

// R-RES-102, R-RES-149: a token that is not one, or that leaves the collection, is a 400; so
// is a resourceVersion other than 0 beside a token.
#[tokio::test]
async fn bad_tokens_are_400() {
    let (app, storage) = app().await;
    five(&app, &storage).await;
    let first = list(&app, &format!("{PAGES}?limit=2")).await;
    let token = continue_of(&first).expect("more remain");
    use base64::Engine;
    let escape = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(r#"{"v":"meta.k8s.io/v1","rv":3,"start":"../../secrets/x\u0000"}"#);
    for bad in ["garbage", "e30", &escape] {
        let r = admin_call(
            &app,
            "GET",
            &format!("{PAGES}?limit=2&continue={bad}"),
            None,
        )
        .await;
        let s = assert_status(&r, 400, "BadRequest");
        assert!(
            s["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("invalid continue token")),
            "{s}"
        );
    }
    let r = admin_call(
        &app,
        "GET",
        &format!("{PAGES}?limit=2&continue={token}&resourceVersion=3"),
        None,
    )
    .await;
    let s = assert_status(&r, 400, "BadRequest");
    assert_eq!(
        s["message"],
        "specifying resource version is not allowed when using continue"
    );
}

// R-RES-166, R-RES-168: a token whose revision was compacted is 410 Expired with Kubernetes'
// message and a fresh token that continues after the same key at the newest revision.
#[tokio::test]
async fn expired_tokens_are_410_with_a_fresh_token() {
    let (app, storage, replica) = app_on_replica(Flavor::Kubernetes).await;
    five(&app, &storage).await;
    let first = list(&app, &format!("{PAGES}?limit=2")).await;
    let token = continue_of(&first).expect("more remain");
    post(&app, PAGES, r#"{"metadata":{"name":"bb"}}"#).await;
    replica.compact(storage.revision().await);
    let r = admin_call(
        &app,
        "GET",
        &format!("{PAGES}?limit=2&continue={token}"),
        None,
    )
    .await;
    let s = assert_status(&r, 410, "Expired");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("The provided continue parameter is too old")),
        "{s}"
    );
    let fresh = s["metadata"]["continue"].as_str().expect("a fresh token");
    let rest = list(&app, &format!("{PAGES}?limit=2&continue={fresh}")).await;
    assert_eq!(names(&rest), ["bb", "c"], "after b, at the newest revision");
    assert_eq!(rv_of(&rest), storage.revision().await);
    let token = continue_of(&rest).expect("d and e remain");
    let end = list(&app, &format!("{PAGES}?limit=2&continue={token}")).await;
    assert_eq!(names(&end), ["d", "e"]);
}

// R-HA-008: a token holds only a revision and a key, so a replica with the same history
// serves the same next page for it.
#[tokio::test]
async fn tokens_work_on_another_replica() {
    let (one, one_store) = app().await;
    let (two, two_store) = app().await;
    five(&one, &one_store).await;
    five(&two, &two_store).await;
    assert_eq!(one_store.revision().await, two_store.revision().await);
    let first = list(&one, &format!("{PAGES}?limit=2")).await;
    let token = continue_of(&first).expect("more remain");
    let here = list(&one, &format!("{PAGES}?limit=2&continue={token}")).await;
    let there = list(&two, &format!("{PAGES}?limit=2&continue={token}")).await;
    assert_eq!(names(&there), ["c", "d"]);
    assert_eq!(names(&here), names(&there));
    assert_eq!(here["metadata"], there["metadata"]);
    let revisions = |l: &Value| -> Vec<Value> {
        l["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["resourceVersion"].clone())
            .collect()
    };
    assert_eq!(revisions(&here), revisions(&there));
}

fn message_of(s: &Value) -> &str {
    s["message"].as_str().expect("message")
}

// R-RES-110: each kind's field selectors name the fields Kubernetes supports for it; any
// other field is a 400 with Kubernetes' message.
#[tokio::test]
async fn field_selectors_per_kind() {
    let (app, _) = app().await;
    config_maps(&app, "f", &[("a", "{}"), ("b", "{}")]).await;
    let get = |path: String| {
        let app = app.clone();
        async move { list(&app, &path).await }
    };
    let sel = |s: &str| format!("fieldSelector={}", enc(s));
    let cms = "/api/v1/namespaces/f/configmaps";
    assert_eq!(
        names(&get(format!("{cms}?{}", sel("metadata.name=b"))).await),
        ["b"]
    );
    assert_eq!(
        names(
            &get(format!(
                "/api/v1/configmaps?{}",
                sel("metadata.namespace=f")
            ))
            .await
        ),
        ["a", "b"]
    );
    let r = admin_call(&app, "GET", &format!("{cms}?{}", sel("data.x=1")), None).await;
    let s = assert_status(&r, 400, "BadRequest");
    assert_eq!(
        message_of(&s),
        r#""data.x" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );

    let nss = "/api/v1/namespaces";
    let active = get(format!("{nss}?{}", sel("status.phase=Active"))).await;
    assert!(names(&active).contains(&"f".to_owned()));
    assert!(names(&get(format!("{nss}?{}", sel("status.phase=Terminating"))).await).is_empty());
    let r = admin_call(
        &app,
        "GET",
        &format!("{nss}?{}", sel("metadata.namespace=f")),
        None,
    )
    .await;
    let s = assert_status(&r, 400, "BadRequest");
    assert_eq!(
        message_of(&s),
        "field label not supported: metadata.namespace"
    );

    let secrets = "/api/v1/namespaces/f/secrets";
    post(&app, secrets, r#"{"metadata":{"name":"plain"}}"#).await;
    post(
        &app,
        secrets,
        r#"{"metadata":{"name":"custom"},"type":"example.com/custom"}"#,
    )
    .await;
    let custom = get(format!("{secrets}?{}", sel("type=example.com/custom"))).await;
    assert_eq!(names(&custom), ["custom"]);
    assert_eq!(
        names(&get(format!("{secrets}?{}", sel("type=Opaque"))).await),
        ["plain"]
    );

    let events = "/api/v1/namespaces/f/events";
    post(
        &app,
        events,
        r#"{"metadata":{"name":"e1"},"involvedObject":{"kind":"ConfigMap","name":"a","namespace":"f","uid":"u1","apiVersion":"v1","resourceVersion":"5","fieldPath":"data"},"reason":"Started","type":"Normal","source":{"component":"kubelet"}}"#,
    )
    .await;
    post(
        &app,
        events,
        r#"{"metadata":{"name":"e2"},"involvedObject":{"kind":"Secret","name":"plain","namespace":"f"},"reason":"Failed","type":"Warning","reportingComponent":"controller"}"#,
    )
    .await;
    for (selector, want) in [
        ("involvedObject.kind=ConfigMap", "e1"),
        ("involvedObject.name=plain", "e2"),
        ("involvedObject.namespace=f,involvedObject.uid=u1", "e1"),
        ("involvedObject.apiVersion=v1", "e1"),
        ("involvedObject.resourceVersion=5", "e1"),
        ("involvedObject.fieldPath=data", "e1"),
        ("reason=Failed", "e2"),
        ("type=Normal", "e1"),
        ("source=kubelet", "e1"),
        ("source=controller", "e2"),
        ("reportingComponent=controller", "e2"),
        ("metadata.name!=e1,metadata.namespace=f", "e2"),
    ] {
        let l = get(format!("{events}?{}", sel(selector))).await;
        assert_eq!(names(&l), [want], "{selector}");
    }
    let r = admin_call(
        &app,
        "GET",
        &format!("{events}?{}", sel("message=hi")),
        None,
    )
    .await;
    let s = assert_status(&r, 400, "BadRequest");
    assert_eq!(message_of(&s), "field label not supported: message");

    let pods = "/api/v1/namespaces/f/pods";
    let pod = |name: &str, node: &str| {
        let node = if node.is_empty() {
            String::new()
        } else {
            format!(r#","nodeName":"{node}""#)
        };
        format!(
            r#"{{"metadata":{{"name":"{name}"}},"spec":{{"containers":[{{"name":"c","image":"i"}}]{node}}}}}"#
        )
    };
    // The account the `serviceaccount` controller would create.
    let accounts = "/api/v1/namespaces/f/serviceaccounts";
    post(&app, accounts, r#"{"metadata":{"name":"default"}}"#).await;
    post(&app, pods, &pod("bound", "n1")).await;
    post(&app, pods, &pod("pending", "")).await;
    for (selector, want) in [
        ("spec.nodeName=n1", "bound"),
        ("spec.nodeName=", "pending"),
        ("spec.nodeName!=n1", "pending"),
        ("spec.restartPolicy=Always,metadata.name=bound", "bound"),
        (
            "spec.schedulerName=default-scheduler,spec.nodeName=n1",
            "bound",
        ),
        ("spec.serviceAccountName=default,spec.nodeName=", "pending"),
        ("status.phase=Pending,metadata.name=pending", "pending"),
    ] {
        let l = get(format!("{pods}?{}", sel(selector))).await;
        assert_eq!(names(&l), [want], "{selector}");
    }
    let r = admin_call(
        &app,
        "GET",
        &format!("{pods}?{}", sel("spec.hostname=x")),
        None,
    )
    .await;
    let s = assert_status(&r, 400, "BadRequest");
    assert_eq!(message_of(&s), "field label not supported: spec.hostname");
}

// R-RES-110: malformed selectors are 400s.
#[tokio::test]
async fn malformed_selectors_are_400() {
    let (app, _) = app().await;
    for query in [
        format!("labelSelector={}", enc("app in web")),
        format!("labelSelector={}", enc("bad key=x")),
        format!("fieldSelector={}", enc("metadata.name")),
    ] {
        let r = admin_call(&app, "GET", &format!("/api/v1/configmaps?{query}"), None).await;
        assert_status(&r, 400, "BadRequest");
    }
}

// R-RES-093, R-RES-110: deletecollection deletes what its selectors select, checks field
// names against the kind, and deletes nothing when they are refused.
#[tokio::test]
async fn deletecollection_with_selectors() {
    let (app, storage) = app().await;
    five(&app, &storage).await;
    let delete = |query: String| {
        let app = app.clone();
        async move { admin_call(&app, "DELETE", &format!("{PAGES}?{query}"), None).await }
    };
    let r = delete(format!("fieldSelector={}", enc("spec.x=1"))).await;
    assert_status(&r, 400, "BadRequest");
    assert_eq!(names(&list(&app, PAGES).await), ["a", "b", "c", "d", "e"]);
    let r = delete(format!("labelSelector={}", enc("x=1"))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(names(&r.json()), ["a", "c", "e"]);
    assert_eq!(names(&list(&app, PAGES).await), ["b", "d"]);
    let r = delete(format!("fieldSelector={}", enc("metadata.name=d"))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(names(&list(&app, PAGES).await), ["b"]);
}
