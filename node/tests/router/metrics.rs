//! `/metrics`: who may read it, its content type, and the request metrics' names, labels and
//! values after driven requests, read back through a Prometheus text parser.

use prometheus_parse::Scrape;
use prometheus_parse::Value;

use super::*;

/// A member of `system:monitoring` only.
fn monitor() -> ClientCertificate {
    static DER: OnceLock<Vec<u8>> = OnceLock::new();
    ClientCertificate::new(
        DER.get_or_init(|| cert("prometheus", Some("system:monitoring")))
            .clone(),
    )
}

/// GET `/metrics` as `who`, which must be allowed; the parsed scrape.
async fn scrape(app: &Router, who: ClientCertificate) -> (Reply, Scrape) {
    let reply = call(app, "GET", "/metrics", None, Some(who)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let text = reply.text();
    let parsed = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("parses");
    (reply, parsed)
}

/// The value of the sample `name` whose labels include `labels`, if any.
fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape
        .samples
        .iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
            Value::Histogram(buckets) => buckets.last().map_or(0.0, |b| b.count),
            Value::Summary(_) => f64::NAN,
        })
}

// R-ACC-191
#[tokio::test]
async fn masters_and_monitoring_read_metrics_and_nobody_else() {
    let (app, _) = app().await;
    let (reply, _) = scrape(&app, admin()).await;
    assert_eq!(
        reply.headers["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    scrape(&app, monitor()).await;
    let denied = call(&app, "GET", "/metrics", None, Some(bob())).await;
    assert_eq!(
        assert_status(&denied, 403, "Forbidden")["message"],
        "forbidden: User \"bob\" cannot get path \"/metrics\""
    );
    assert_eq!(
        assert_status(
            &call(&app, "GET", "/metrics", None, None).await,
            403,
            "Forbidden"
        )["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
    );
    // The monitoring group reads health and metrics, nothing else.
    let other = call(&app, "GET", CM_PATH, None, Some(monitor())).await;
    assert_status(&other, 403, "Forbidden");
}

#[tokio::test]
async fn requests_are_counted_with_kube_apiserver_labels() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &cm("a")).await;
    let dry = admin_call(
        &app,
        "POST",
        &format!("{CM_PATH}?dryRun=All"),
        Some(&cm("b")),
    )
    .await;
    assert_eq!(dry.status, StatusCode::CREATED, "{}", dry.text());
    assert_eq!(
        admin_call(&app, "GET", &format!("{CM_PATH}/a"), None)
            .await
            .status,
        200
    );
    assert_eq!(
        admin_call(&app, "GET", &format!("{CM_PATH}/missing"), None)
            .await
            .status,
        404
    );
    assert_eq!(admin_call(&app, "GET", CM_PATH, None).await.status, 200);
    assert_eq!(admin_call(&app, "GET", CM_PATH, None).await.status, 200);
    assert_eq!(
        admin_call(&app, "GET", "/apis/apps/v1/deployments", None)
            .await
            .status,
        200
    );

    let (_, s) = scrape(&app, admin()).await;
    let cm = |verb: &'static str, scope: &'static str, code: &'static str, dry: &'static str| {
        [
            ("verb", verb),
            ("dry_run", dry),
            ("group", ""),
            ("version", "v1"),
            ("resource", "configmaps"),
            ("subresource", ""),
            ("scope", scope),
            ("component", "apiserver"),
            ("code", code),
        ]
    };
    let total = "apiserver_request_total";
    assert_eq!(
        value(&s, total, &cm("POST", "resource", "201", "")),
        Some(1.0)
    );
    assert_eq!(
        value(&s, total, &cm("POST", "resource", "201", "All")),
        Some(1.0)
    );
    assert_eq!(
        value(&s, total, &cm("GET", "resource", "200", "")),
        Some(1.0)
    );
    assert_eq!(
        value(&s, total, &cm("GET", "resource", "404", "")),
        Some(1.0)
    );
    assert_eq!(
        value(&s, total, &cm("LIST", "namespace", "200", "")),
        Some(2.0)
    );
    let deployments = [
        ("verb", "LIST"),
        ("group", "apps"),
        ("version", "v1"),
        ("resource", "deployments"),
        ("scope", "cluster"),
        ("code", "200"),
    ];
    assert_eq!(value(&s, total, &deployments), Some(1.0));
    // The histogram counts the same requests, without the code.
    let list = [
        ("verb", "LIST"),
        ("resource", "configmaps"),
        ("scope", "namespace"),
    ];
    assert_eq!(
        value(&s, "apiserver_request_duration_seconds", &list),
        Some(2.0)
    );
    let le_60 = s.samples.iter().any(|x| {
        x.metric == "apiserver_request_duration_seconds"
            && matches!(&x.value, Value::Histogram(b) if b.iter().any(|b| b.less_than == 60.0))
    });
    assert!(le_60, "kube-apiserver's buckets end at 60 s");
    // Nothing executes now but the scrape (not a resource request).
    for kind in ["readOnly", "mutating"] {
        assert!(
            value(
                &s,
                "apiserver_current_inflight_requests",
                &[("request_kind", kind)]
            )
            .is_some(),
            "{kind}"
        );
    }
    assert_eq!(
        s.docs.get(total).map(String::as_str),
        Some(
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code."
        )
    );
}

#[tokio::test]
async fn a_watch_is_long_running_while_it_streams() {
    let (app, _) = app().await;
    let request = Request::builder()
        .uri(format!("{CM_PATH}?watch=true&timeoutSeconds=30"))
        .body(Body::empty())
        .expect("request");
    let mut request = request;
    request.extensions_mut().insert(admin());
    let watch = app.clone().oneshot(request).await.expect("infallible");
    assert_eq!(watch.status(), StatusCode::OK);
    let labels = [
        ("verb", "WATCH"),
        ("resource", "configmaps"),
        ("scope", "namespace"),
        ("component", "apiserver"),
    ];
    created(&app, CM_PATH, &cm("seen")).await;
    let mut body = watch.into_body();
    let first = body.frame().await.expect("an event").expect("a frame");
    assert!(first.is_data());
    let (_, s) = scrape(&app, admin()).await;
    assert_eq!(
        value(&s, "apiserver_longrunning_requests", &labels),
        Some(1.0)
    );
    assert_eq!(value(&s, "apiserver_request_total", &labels), None);
    let resource = [("group", ""), ("version", "v1"), ("resource", "configmaps")];
    assert_eq!(
        value(&s, "apiserver_watch_events_total", &resource),
        Some(1.0)
    );
    drop(body);
    let (_, s) = scrape(&app, admin()).await;
    assert_eq!(
        value(&s, "apiserver_longrunning_requests", &labels),
        Some(0.0)
    );
    let ended = [
        ("code", "200"),
        ("verb", "WATCH"),
        ("resource", "configmaps"),
    ];
    assert_eq!(value(&s, "apiserver_request_total", &ended), Some(1.0));
}

// R-VER-090, R-VER-092
#[tokio::test]
async fn deprecated_metrics_are_hidden_until_asked_for() {
    use apiary_api::metrics::Exposure;
    use apiary_api::metrics::Metrics;

    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let hidden = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    hidden.metrics.set_object_count("apps", "deployments", 3);
    let app = apiary_api::router(storage.clone(), hidden);
    let (_, s) = scrape(&app, admin()).await;
    let objects = [("group", "apps"), ("resource", "deployments")];
    assert_eq!(value(&s, "apiserver_resource_objects", &objects), Some(3.0));
    assert!(
        !s.samples
            .iter()
            .any(|x| x.metric == "apiserver_storage_objects"),
        "deprecated in 1.34: hidden in 1.37"
    );

    let mut shown = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    shown.metrics =
        Metrics::new(Exposure::for_show_hidden_version("1.36").expect("previous minor"));
    shown.metrics.set_object_count("apps", "deployments", 3);
    let app = apiary_api::router(storage, shown);
    let (_, s) = scrape(&app, admin()).await;
    assert_eq!(
        value(
            &s,
            "apiserver_storage_objects",
            &[("resource", "deployments.apps")]
        ),
        Some(3.0)
    );
    assert_eq!(
        s.docs.get("apiserver_storage_objects").map(String::as_str),
        Some(
            "[STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1."
        )
    );
}

// R-VER-050: a request to a deprecated version (core v1 Endpoints, deprecated with no removal
// release) sets `apiserver_requested_deprecated_apis` to 1 with its group, version, resource,
// subresource and an empty removed_release; a version that is not deprecated gets no sample.
#[tokio::test]
async fn a_deprecated_version_sets_the_requested_deprecated_apis_gauge() {
    let (app, _) = app().await;
    let name = "apiserver_requested_deprecated_apis";
    let (_, before) = scrape(&app, admin()).await;
    assert_eq!(value(&before, name, &[("resource", "endpoints")]), None);
    let listed = admin_call(&app, "GET", "/api/v1/namespaces/default/endpoints", None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
    fetched(&app, CM_PATH).await;
    let (_, after) = scrape(&app, admin()).await;
    let labels = [
        ("group", ""),
        ("version", "v1"),
        ("resource", "endpoints"),
        ("subresource", ""),
        ("removed_release", ""),
    ];
    assert_eq!(value(&after, name, &labels), Some(1.0));
    assert_eq!(value(&after, name, &[("resource", "configmaps")]), None);
}
