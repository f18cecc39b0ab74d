//! Watch over HTTP: the start versions, the events and their order, resuming, 410 after
//! compaction, bookmarks, streaming lists, timeouts, selectors and single-object watches
//! (spec 000 "Watch", "Resource version semantics", "Events").

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::body::HttpBody as _;
use http::Request;
use http_body_util::BodyExt;
use serde_json::Value;
use serde_json::json;
use tokio::time::Instant;
use tower::ServiceExt;

use super::AlwaysReady;
use super::CM_PATH;
use super::MemStorage;
use super::admin;
use super::admin_call;
use super::assert_status;
use crate::ApiConfig;
use crate::WatchSettings;
use crate::bootstrap::ensure_system_namespaces;
use crate::flavor::Flavor;

/// The longest a test waits for an event that must come.
pub(super) const PATIENCE: Duration = Duration::from_secs(5);

/// A router whose watches report progress every `bookmark_interval`.
async fn app_with(bookmark_interval: Duration) -> (Router, Arc<MemStorage>) {
    let storage = Arc::new(MemStorage::default());
    ensure_system_namespaces(
        storage.as_ref(),
        Flavor::Kubernetes,
        &crate::SystemClock,
        &crate::RandomSource::seeded(0),
    )
    .await
    .expect("bootstrap");
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.watch = WatchSettings {
        bookmark_interval,
        ..WatchSettings::default()
    };
    (crate::router(storage.clone(), config), storage)
}

async fn app() -> (Router, Arc<MemStorage>) {
    app_with(WatchSettings::default().bookmark_interval).await
}

/// An open watch, read event by event.
pub(super) struct Watch {
    body: Body,
    buffer: Vec<u8>,
}

impl Watch {
    /// Opens `path` as the admin; the response must be a 200 JSON stream without a length.
    pub(super) async fn open(app: &Router, path: &str) -> Self {
        let mut req = Request::get(path).body(Body::empty()).expect("request");
        req.extensions_mut().insert(admin());
        let res = app.clone().oneshot(req).await.expect("infallible");
        assert_eq!(res.status().as_u16(), 200, "{path}");
        assert_eq!(
            res.headers().get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
        // R-RES-136: no length, so HTTP/1.1 sends the body chunked.
        assert!(res.headers().get("content-length").is_none());
        let body = res.into_body();
        assert_eq!(body.size_hint().exact(), None);
        Self {
            body,
            buffer: Vec::new(),
        }
    }

    /// The next event within `wait`: `Some(None)` when the stream ended, `None` on timeout.
    async fn next_within(&mut self, wait: Duration) -> Option<Option<Value>> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let event = serde_json::from_slice(&line).unwrap_or_else(|e| {
                    panic!("not JSON ({e}): {}", String::from_utf8_lossy(&line))
                });
                return Some(Some(event));
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame())
                .await
                .ok()?;
            match frame {
                None => {
                    assert!(self.buffer.is_empty(), "a partial event at the end");
                    return Some(None);
                }
                Some(frame) => {
                    let frame = frame.expect("body frame");
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
            }
        }
    }

    /// The next event, which must come.
    pub(super) async fn next(&mut self) -> Value {
        match self.next_within(PATIENCE).await {
            Some(Some(event)) => event,
            Some(None) => panic!("the watch ended"),
            None => panic!("no event within {PATIENCE:?}"),
        }
    }

    /// The next event's type, object name and resourceVersion.
    async fn next_brief(&mut self) -> (String, String, String) {
        brief(&self.next().await)
    }

    /// Asserts that no event comes for a while.
    pub(super) async fn quiet(&mut self) {
        let got = self.next_within(Duration::from_millis(300)).await;
        assert!(got.is_none(), "unexpected: {got:?}");
    }

    /// Asserts that the stream ends within `wait` (events before the end are returned).
    pub(super) async fn until_end(&mut self, wait: Duration) -> Vec<Value> {
        let deadline = Instant::now() + wait;
        let mut events = Vec::new();
        loop {
            match self.next_within(deadline - Instant::now()).await {
                Some(Some(event)) => events.push(event),
                Some(None) => return events,
                None => panic!("the watch did not end within {wait:?}; got {events:?}"),
            }
        }
    }
}

fn brief(event: &Value) -> (String, String, String) {
    let meta = &event["object"]["metadata"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        s(&event["type"]),
        s(&meta["name"]),
        s(&meta["resourceVersion"]),
    )
}

fn ev(kind: &str, name: &str, rv: &str) -> (String, String, String) {
    (kind.to_owned(), name.to_owned(), rv.to_owned())
}

fn labelled(name: &str, label: &str, data: &str) -> String {
    json!({"apiVersion":"v1","kind":"ConfigMap",
        "metadata":{"name":name,"labels":{"l":label}},"data":{"a":data}})
    .to_string()
}

/// Creates a config map; returns its resourceVersion.
async fn create(app: &Router, name: &str, label: &str) -> String {
    let r = admin_call(app, "POST", CM_PATH, Some(&labelled(name, label, "1"))).await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.text());
    rv_of(&r.json())
}

/// Replaces a config map unconditionally; returns its new resourceVersion.
async fn update(app: &Router, name: &str, label: &str, data: &str) -> String {
    let path = format!("{CM_PATH}/{name}");
    let r = admin_call(app, "PUT", &path, Some(&labelled(name, label, data))).await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text());
    rv_of(&r.json())
}

async fn delete(app: &Router, storage: &MemStorage, name: &str) -> String {
    let r = admin_call(app, "DELETE", &format!("{CM_PATH}/{name}"), None).await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text());
    storage.revision().to_string()
}

fn rv_of(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// R-RES-085, R-RES-097, R-RES-169, R-RES-038, R-RES-136, R-RES-174, R-RES-227, R-RES-228,
// R-RES-230, R-RES-232, R-RES-234
#[tokio::test]
async fn watch_sends_the_state_then_every_change_in_order() {
    let (app, storage) = app().await;
    let a = create(&app, "a", "x").await;
    let b = create(&app, "b", "x").await;
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1")).await;
    let first = w.next().await;
    assert_eq!(brief(&first), ev("ADDED", "a", &a));
    assert_eq!(first["object"]["kind"], "ConfigMap");
    assert_eq!(first["object"]["apiVersion"], "v1");
    assert_eq!(w.next_brief().await, ev("ADDED", "b", &b));
    w.quiet().await;

    let a2 = update(&app, "a", "x", "2").await;
    let gone = delete(&app, &storage, "b").await;
    let c = create(&app, "c", "x").await;
    let modified = w.next().await;
    assert_eq!(brief(&modified), ev("MODIFIED", "a", &a2));
    assert_eq!(modified["object"]["data"]["a"], "2");
    // The last state of the object, at the deletion's resourceVersion.
    let deleted = w.next().await;
    assert_eq!(brief(&deleted), ev("DELETED", "b", &gone));
    assert_eq!(deleted["object"]["data"]["a"], "1");
    assert_eq!(deleted["object"]["metadata"]["labels"]["l"], "x");
    assert_eq!(w.next_brief().await, ev("ADDED", "c", &c));
    w.quiet().await;
}

// R-RES-170
#[tokio::test]
async fn watch_at_zero_sends_the_state_too() {
    let (app, _) = app().await;
    let a = create(&app, "a", "x").await;
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=true&resourceVersion=0")).await;
    assert_eq!(w.next_brief().await, ev("ADDED", "a", &a));
    let b = create(&app, "b", "x").await;
    assert_eq!(w.next_brief().await, ev("ADDED", "b", &b));
}

// R-RES-171, R-RES-175, R-RES-098, R-HA-010
#[tokio::test]
async fn watch_from_a_version_sends_only_later_changes_and_resumes_without_gap() {
    let (app, _) = app().await;
    let a = create(&app, "a", "x").await;
    let b = create(&app, "b", "x").await;
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1&resourceVersion={a}")).await;
    assert_eq!(w.next_brief().await, ev("ADDED", "b", &b));
    w.quiet().await;
    drop(w);

    // Changes while no one watches are delivered to the watch resumed from the last version.
    let a2 = update(&app, "a", "x", "2").await;
    let c = create(&app, "c", "x").await;
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1&resourceVersion={b}")).await;
    assert_eq!(w.next_brief().await, ev("MODIFIED", "a", &a2));
    assert_eq!(w.next_brief().await, ev("ADDED", "c", &c));
    w.quiet().await;
}

// R-RES-072, R-RES-231, R-RES-176 (CHECKLIST table: 200, then one ERROR event with a 410)
#[tokio::test]
async fn watch_from_a_compacted_version_gets_one_410_error_event() {
    let (app, storage) = app().await;
    let a = create(&app, "a", "x").await;
    create(&app, "b", "x").await;
    let compacted = storage.revision();
    storage.compact(compacted);
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1&resourceVersion={a}")).await;
    let events = w.until_end(PATIENCE).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ERROR");
    let status = &events[0]["object"];
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["status"], "Failure");
    assert_eq!(status["code"], 410);
    assert_eq!(status["reason"], "Expired");
    assert_eq!(
        status["message"],
        format!("too old resource version: {a} ({compacted})")
    );

    // The client's recovery: list again, watch from the list's version.
    let list = admin_call(&app, "GET", CM_PATH, None).await.json();
    let listed = rv_of(&list);
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1&resourceVersion={listed}")).await;
    let c = create(&app, "c", "x").await;
    assert_eq!(w.next_brief().await, ev("ADDED", "c", &c));
}

// R-RES-103, R-RES-177, R-RES-229, R-RES-039
#[tokio::test]
async fn bookmarks_come_only_when_asked_and_report_progress() {
    let (app, storage) = app_with(Duration::from_millis(100)).await;
    let a = create(&app, "a", "x").await;
    let start = storage.revision();
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1&allowWatchBookmarks=true")).await;
    assert_eq!(w.next_brief().await, ev("ADDED", "a", &a));
    let bookmark = w.next().await;
    assert_eq!(
        bookmark,
        json!({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1",
            "metadata":{"resourceVersion":start.to_string(),"creationTimestamp":null}}})
    );
    let b = create(&app, "b", "x").await;
    // Bookmarks already due may come first; none may claim a version before b is sent.
    loop {
        let (kind, name, rv) = w.next_brief().await;
        if kind == "ADDED" {
            assert_eq!((name.as_str(), rv.as_str()), ("b", b.as_str()));
            break;
        }
        assert_eq!(kind, "BOOKMARK");
        assert!(rv.parse::<u64>().expect("rv") < b.parse().expect("rv"));
    }
    let after = w.next().await;
    assert_eq!(after["type"], "BOOKMARK");
    assert!(rv_of(&after["object"]).parse::<u64>().expect("rv") >= b.parse().expect("rv"));

    let mut plain = Watch::open(&app, &format!("{CM_PATH}?watch=1&timeoutSeconds=1")).await;
    let events = plain.until_end(PATIENCE).await;
    let kinds: Vec<_> = events.iter().map(|e| e["type"].clone()).collect();
    assert_eq!(kinds, [json!("ADDED"), json!("ADDED")], "{events:?}");
}

// R-RES-178, R-RES-179, R-RES-180, R-RES-181, R-RES-099, R-RES-039
#[tokio::test]
async fn streaming_list_sends_the_state_then_the_initial_events_end_bookmark() {
    let (app, storage) = app().await;
    let a = create(&app, "a", "x").await;
    let b = create(&app, "b", "x").await;
    let sie = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
    for rv in ["", "&resourceVersion=0", &format!("&resourceVersion={a}")] {
        let synced = storage.revision().to_string();
        let path = format!("{CM_PATH}?{sie}&allowWatchBookmarks=true{rv}");
        let mut w = Watch::open(&app, &path).await;
        assert_eq!(w.next_brief().await, ev("ADDED", "a", &a), "{rv}");
        assert_eq!(w.next_brief().await, ev("ADDED", "b", &b), "{rv}");
        let end = w.next().await;
        assert_eq!(
            end,
            json!({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1",
                "metadata":{"resourceVersion":synced,"creationTimestamp":null,
                    "annotations":{"k8s.io/initial-events-end":"true"}}}}),
            "{rv}"
        );
        w.quiet().await;
    }

    // Without bookmarks, the initial events go straight on to the changes.
    let mut w = Watch::open(&app, &format!("{CM_PATH}?{sie}")).await;
    assert_eq!(w.next_brief().await, ev("ADDED", "a", &a));
    assert_eq!(w.next_brief().await, ev("ADDED", "b", &b));
    let a2 = update(&app, "a", "x", "2").await;
    assert_eq!(w.next_brief().await, ev("MODIFIED", "a", &a2));

    // sendInitialEvents=false with a version starts there, with no initial events.
    let path = format!(
        "{CM_PATH}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion={b}"
    );
    let mut w = Watch::open(&app, &path).await;
    assert_eq!(w.next_brief().await, ev("MODIFIED", "a", &a2));
    w.quiet().await;
}

// R-RES-173, R-RES-174
#[tokio::test]
async fn timeout_ends_a_watch_waiting_for_a_future_version() {
    let (app, storage) = app().await;
    let future = storage.revision() + 1000;
    let opened = Instant::now();
    let path = format!("{CM_PATH}?watch=1&resourceVersion={future}&timeoutSeconds=1");
    let mut w = Watch::open(&app, &path).await;
    create(&app, "a", "x").await;
    let events = w.until_end(PATIENCE).await;
    assert!(events.is_empty(), "{events:?}");
    assert!(opened.elapsed() >= Duration::from_millis(900));
}

// R-RES-110, R-RES-227, R-RES-228, R-RES-230
#[tokio::test]
async fn selectors_turn_updates_into_added_and_deleted() {
    let (app, storage) = app().await;
    let a = create(&app, "a", "x").await;
    create(&app, "b", "y").await;
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1&labelSelector=l%3Dx")).await;
    assert_eq!(w.next_brief().await, ev("ADDED", "a", &a));
    w.quiet().await;

    let b2 = update(&app, "b", "x", "1").await;
    assert_eq!(w.next_brief().await, ev("ADDED", "b", &b2));
    let b3 = update(&app, "b", "x", "2").await;
    assert_eq!(w.next_brief().await, ev("MODIFIED", "b", &b3));
    // No longer selected: DELETED with the last selected state, at the update's version.
    let a2 = update(&app, "a", "y", "2").await;
    let left = w.next().await;
    assert_eq!(brief(&left), ev("DELETED", "a", &a2));
    assert_eq!(left["object"]["metadata"]["labels"]["l"], "x");
    assert_eq!(left["object"]["data"]["a"], "1");
    update(&app, "a", "y", "3").await;
    w.quiet().await;
    let gone = delete(&app, &storage, "b").await;
    assert_eq!(w.next_brief().await, ev("DELETED", "b", &gone));
    delete(&app, &storage, "a").await;
    w.quiet().await;
}

// R-RES-086, R-RES-110
#[tokio::test]
async fn watch_on_one_object() {
    let (app, _) = app().await;
    let a = create(&app, "a", "x").await;
    create(&app, "ab", "x").await;
    let paths = [
        format!("{CM_PATH}/a?watch=1"),
        "/api/v1/watch/namespaces/default/configmaps/a".to_owned(),
        format!("{CM_PATH}?watch=1&fieldSelector=metadata.name%3Da"),
        "/api/v1/configmaps?watch=1&fieldSelector=metadata.name%3Da".to_owned(),
    ];
    let mut watches = Vec::new();
    for path in &paths {
        let mut w = Watch::open(&app, path).await;
        assert_eq!(w.next_brief().await, ev("ADDED", "a", &a), "{path}");
        watches.push(w);
    }
    update(&app, "ab", "x", "2").await;
    let a2 = update(&app, "a", "x", "2").await;
    for (w, path) in watches.iter_mut().zip(&paths) {
        assert_eq!(w.next_brief().await, ev("MODIFIED", "a", &a2), "{path}");
        w.quiet().await;
    }
}

// R-RES-104, R-RES-099, R-RES-100
#[tokio::test]
async fn invalid_watch_options_are_rejected_before_the_stream() {
    let (app, _) = app().await;
    for query in [
        "sendInitialEvents=true",
        "resourceVersionMatch=NotOlderThan&resourceVersion=1",
        "sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1",
    ] {
        let r = admin_call(&app, "GET", &format!("{CM_PATH}?watch=1&{query}"), None).await;
        let s = assert_status(&r, 422, "Invalid");
        assert_eq!(s["details"]["kind"], "ListOptions", "{query}");
    }
    for query in [
        "resourceVersion=abc",
        "timeoutSeconds=x",
        "labelSelector=a%20in%20(",
        "sendInitialEvents=maybe&resourceVersionMatch=NotOlderThan",
        // R-RES-110: a field ConfigMaps cannot be selected by.
        "fieldSelector=spec.nodeName%3Dx",
    ] {
        let r = admin_call(&app, "GET", &format!("{CM_PATH}?watch=1&{query}"), None).await;
        assert_status(&r, 400, "BadRequest");
    }
}

// R-RES-234: events that are ready together share a body frame (each still one JSON document
// ending in a newline), so a watch's initial state is not one write per object.
#[tokio::test]
async fn events_ready_together_share_a_frame() {
    let (app, _) = app().await;
    let count = 50;
    for i in 0..count {
        create(&app, &format!("cm-{i}"), "x").await;
    }
    let mut w = Watch::open(&app, &format!("{CM_PATH}?watch=1")).await;
    let mut frames = 0;
    let mut events = Vec::new();
    while events.len() < count {
        let frame = tokio::time::timeout(PATIENCE, w.body.frame())
            .await
            .expect("a frame in time")
            .expect("the watch goes on")
            .expect("body frame");
        let Ok(data) = frame.into_data() else {
            continue;
        };
        frames += 1;
        assert_eq!(data.last(), Some(&b'\n'), "a frame ends with a whole event");
        for line in data.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            events.push(brief(
                &serde_json::from_slice(line).expect("one JSON event"),
            ));
        }
    }
    let names: Vec<String> = (0..count).map(|i| format!("cm-{i}")).collect();
    let mut seen: Vec<String> = events.iter().map(|(_, name, _)| name.clone()).collect();
    seen.sort();
    let mut expected = names.clone();
    expected.sort();
    assert_eq!(seen, expected);
    assert!(events.iter().all(|(kind, _, _)| kind == "ADDED"));
    assert!(frames < count, "{count} events took {frames} frames");
}
