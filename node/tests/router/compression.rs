//! Response compression through the router (`APIResponseCompression`): large get and list
//! answers are gzip for clients that accept it and decompress to the plain answer; small
//! answers, watches and a server with the gate off send plain bodies.

use std::io::Read;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use http::Request;
use http::StatusCode;
use tower::ServiceExt;

use super::AlwaysReady;
use super::Reply;
use super::admin;
use super::backend_in;
use super::created;
use super::get_with;
use apiary_api::ApiConfig;
use apiary_api::Feature;
use apiary_api::FeatureGates;
use apiary_api::flavor::Flavor;

/// Bytes of data in the large ConfigMap: above kube-apiserver's 128 KiB threshold.
const LARGE: usize = 200 * 1024;

/// A router over a fresh store with `gates`, holding one ConfigMap `big` larger than the
/// compression threshold in `default`.
async fn app_with(gates: FeatureGates) -> Router {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.feature_gates = gates;
    let app = apiary_api::router(storage, config);
    let value: String = b"abcdefghijklmnopqrstuvwxyz"
        .iter()
        .cycle()
        .take(LARGE)
        .map(|&b| char::from(b))
        .collect();
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "big"},
        "data": {"value": value},
    });
    created(
        &app,
        "/api/v1/namespaces/default/configmaps",
        &body.to_string(),
    )
    .await;
    app
}

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut plain)
        .expect("a gzip body");
    plain
}

fn content_encoding(reply: &Reply) -> Option<&str> {
    reply
        .headers
        .get("content-encoding")
        .map(|v| v.to_str().expect("ascii"))
}

// R-RES-133
#[tokio::test]
async fn large_get_and_list_are_gzip_for_clients_that_accept_it() {
    let app = app_with(FeatureGates::default()).await;
    for path in [
        "/api/v1/namespaces/default/configmaps/big",
        "/api/v1/namespaces/default/configmaps",
    ] {
        let plain = get_with(&app, path, &[]).await;
        assert_eq!(plain.status, StatusCode::OK, "{}", plain.text());
        assert_eq!(content_encoding(&plain), None);
        assert!(plain.body.len() > LARGE);

        let zipped = get_with(&app, path, &[("accept-encoding", "deflate, gzip;q=0.8")]).await;
        assert_eq!(zipped.status, StatusCode::OK);
        assert_eq!(content_encoding(&zipped), Some("gzip"), "{path}");
        assert_eq!(
            zipped.headers["content-type"],
            plain.headers["content-type"]
        );
        assert_eq!(zipped.headers["vary"], "accept-encoding");
        assert!(
            zipped.body.len() < plain.body.len() / 10,
            "{path} not compressed"
        );
        let unzipped: serde_json::Value =
            serde_json::from_slice(&gunzip(&zipped.body)).expect("JSON inside");
        assert_eq!(unzipped, plain.json(), "{path}");
    }
}

// R-RES-133: only what kube-apiserver compresses: bodies above its threshold, never a watch,
// and an `Accept-Encoding` without gzip is answered plainly (never 406).
#[tokio::test]
async fn small_answers_watches_and_other_encodings_stay_plain() {
    let app = app_with(FeatureGates::default()).await;
    let small = get_with(
        &app,
        "/api/v1/namespaces/default",
        &[("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(small.status, StatusCode::OK);
    assert_eq!(content_encoding(&small), None);
    assert_eq!(small.json()["metadata"]["name"], "default");

    for accept in ["br", "identity;q=0", "*;q=0"] {
        let other = get_with(
            &app,
            "/api/v1/namespaces/default/configmaps/big",
            &[("accept-encoding", accept)],
        )
        .await;
        assert_eq!(other.status, StatusCode::OK, "{accept}");
        assert_eq!(content_encoding(&other), None, "{accept}");
        assert!(other.body.len() > LARGE);
    }

    let mut watch = Request::builder()
        .uri("/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1")
        .header("accept-encoding", "gzip")
        .body(Body::empty())
        .expect("request");
    watch.extensions_mut().insert(admin());
    let response = app.oneshot(watch).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers().get("content-encoding"), None);
}

// R-RES-134
#[tokio::test]
async fn with_the_gate_off_nothing_is_compressed() {
    let (gates, _) = FeatureGates::parse(["APIResponseCompression=false"]).expect("gates");
    assert!(!gates.enabled(Feature::APIResponseCompression));
    let app = app_with(gates).await;
    for path in [
        "/api/v1/namespaces/default/configmaps/big",
        "/api/v1/namespaces/default/configmaps",
    ] {
        let reply = get_with(&app, path, &[("accept-encoding", "gzip")]).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(content_encoding(&reply), None, "{path}");
        assert_eq!(reply.headers.get("vary"), None);
        assert!(reply.body.len() > LARGE);
        assert!(reply.json()["kind"].is_string());
    }
}

/// A streaming list of the large ConfigMap asking for gzip, read to its end (the watch times
/// out after a second).
async fn watch_list(app: &axum::Router, accept_encoding: &str) -> http::Response<Body> {
    let mut watch = Request::builder()
        .uri(
            "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true\
             &allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
        )
        .header("accept-encoding", accept_encoding)
        .body(Body::empty())
        .expect("request");
    watch.extensions_mut().insert(admin());
    app.clone().oneshot(watch).await.expect("infallible")
}

/// The events of a watch body: one JSON document after another.
fn events(body: &[u8]) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_slice(body)
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("JSON events")
}

// R-RES-178: `WatchListCompression` (beta, on in kube-apiserver 1.37): a streaming list is
// gzip for a client that accepts it, each flushed frame a complete gzip member, so the whole
// body decompresses to the events (the initial ADDED, then the initial-events-end BOOKMARK)
// whatever its size; with the gate off it stays plain.
#[tokio::test]
async fn streaming_lists_are_gzip_with_watch_list_compression() {
    use http_body_util::BodyExt;

    let app = app_with(FeatureGates::default()).await;
    let zipped = watch_list(&app, "gzip").await;
    assert_eq!(zipped.status(), StatusCode::OK);
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    assert_eq!(zipped.headers()["content-type"], "application/json");
    assert!(zipped.headers().get_all("vary").iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.eq_ignore_ascii_case("accept-encoding"))
    }));
    let body = zipped.into_body().collect().await.expect("body").to_bytes();
    assert!(body.len() < LARGE / 10, "not compressed: {}", body.len());
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(&body[..])
        .read_to_end(&mut plain)
        .expect("gzip members");
    let initial = events(&plain);
    assert_eq!(initial[0]["type"], "ADDED");
    assert_eq!(initial[0]["object"]["metadata"]["name"], "big");
    assert_eq!(initial[1]["type"], "BOOKMARK");

    // A client that does not accept gzip gets the same events plainly.
    let unzipped = watch_list(&app, "identity").await;
    assert_eq!(unzipped.headers().get("content-encoding"), None);
    let body = unzipped
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let unzipped = events(&body);
    assert_eq!(unzipped[0], initial[0]);
    assert_eq!(unzipped[1]["type"], "BOOKMARK");

    let (gates, _) = FeatureGates::parse(["WatchListCompression=false"]).expect("gates");
    let app = app_with(gates).await;
    let off = watch_list(&app, "gzip").await;
    assert_eq!(off.status(), StatusCode::OK);
    assert_eq!(off.headers().get("content-encoding"), None);
    let body = off.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(events(&body)[0]["object"]["metadata"]["name"], "big");
}
