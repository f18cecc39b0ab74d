//! Deprecation signals over HTTP: a request to a deprecated version (a beta enabled beside its
//! GA, or a GA kind its type deprecates) answers with kube-apiserver's `Warning`, whatever the
//! verb, and carries the resolved [`DeprecatedApi`] in the response's extensions for the
//! metric and the audit annotations; the GA version and discovery do not.

use serde_json::json;

use super::*;
use apiary_api::deprecation::DeprecatedApi;
use apiary_api::deprecation::Release;
use apiary_api::registry::RuntimeConfig;

const SVM_BETA: &str = "/apis/storagemigration.k8s.io/v1beta1/storageversionmigrations";
const SVM_GA: &str = "/apis/storagemigration.k8s.io/v1/storageversionmigrations";

const SVM_WARNING: &str = "299 - \"storagemigration.k8s.io/v1beta1 StorageVersionMigration is \
     deprecated in v1.37+, unavailable in v1.40+; use storagemigration.k8s.io/v1 \
     StorageVersionMigration\"";

/// The server of `flavor` with `runtime_config` (`--runtime-config` values).
async fn app_with(flavor: Flavor, runtime_config: &[&str]) -> Router {
    let (storage, _) = backend_in(flavor).await;
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    config.runtime_config =
        RuntimeConfig::parse(runtime_config.iter().copied(), flavor).expect("runtime config");
    apiary_api::router(storage, config)
}

/// `method path` with `body` as the admin: the reply and the response's [`DeprecatedApi`].
async fn deprecated_call(
    app: &Router,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (Reply, Option<DeprecatedApi>) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.unwrap_or_default().to_owned()))
        .expect("request");
    req.extensions_mut().insert(admin());
    let res = app.clone().oneshot(req).await.expect("infallible");
    let api = res.extensions().get::<DeprecatedApi>().cloned();
    let status = res.status();
    let headers = res.headers().clone();
    let body = res.into_body().collect().await.expect("body").to_bytes();
    let reply = Reply {
        status,
        headers,
        body: body.to_vec(),
    };
    (reply, api)
}

fn svm(name: &str) -> String {
    json!({
        "apiVersion": "storagemigration.k8s.io/v1beta1",
        "kind": "StorageVersionMigration",
        "metadata": {"name": name},
        "spec": {"resource": {"group": "apps", "resource": "deployments"}},
    })
    .to_string()
}

fn svm_api(subresource: &str) -> DeprecatedApi {
    DeprecatedApi {
        group: "storagemigration.k8s.io".into(),
        version: "v1beta1".into(),
        resource: "storageversionmigrations".into(),
        subresource: subresource.into(),
        removed_release: Some(Release::new(1, 40)),
    }
}

// R-VER-048: a beta enabled beside its GA answers create, get, list, a subresource and a
// failed read with the deprecation `Warning` in kube-apiserver's wording.
#[tokio::test]
async fn a_deprecated_beta_warns_on_every_verb() {
    let app = app_with(Flavor::Kubernetes, &["storagemigration.k8s.io/v1beta1"]).await;
    let (created, api) = deprecated_call(&app, "POST", SVM_BETA, Some(&svm("m"))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(warnings(&created), [SVM_WARNING]);
    assert_eq!(api, Some(svm_api("")));

    let item = format!("{SVM_BETA}/m");
    for path in [item.as_str(), SVM_BETA] {
        let (read, api) = deprecated_call(&app, "GET", path, None).await;
        assert_eq!(read.status, StatusCode::OK, "{path}: {}", read.text());
        assert_eq!(warnings(&read), [SVM_WARNING], "{path}");
        assert_eq!(api, Some(svm_api("")), "{path}");
    }

    let status = format!("{item}/status");
    let (read, api) = deprecated_call(&app, "GET", &status, None).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text());
    assert_eq!(warnings(&read), [SVM_WARNING]);
    assert_eq!(api, Some(svm_api("status")));
    let mut object = read.json();
    object["status"] = json!({"resourceVersion": "1"});
    let (updated, api) = deprecated_call(&app, "PUT", &status, Some(&object.to_string())).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    assert_eq!(warnings(&updated), [SVM_WARNING]);
    assert_eq!(api, Some(svm_api("status")));

    // A failure past the route's checks warns as well, as kube-apiserver's route does.
    let (missing, api) = deprecated_call(&app, "GET", &format!("{SVM_BETA}/none"), None).await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(warnings(&missing), [SVM_WARNING]);
    assert_eq!(api, Some(svm_api("")));
}

// R-VER-048: a watch's headers carry the warning before its first event.
#[tokio::test]
async fn a_watch_of_a_deprecated_version_warns() {
    let app = app_with(Flavor::Kubernetes, &["storagemigration.k8s.io/v1beta1"]).await;
    let mut req = Request::builder()
        .uri(format!("{SVM_BETA}?watch=1"))
        .body(Body::empty())
        .expect("request");
    req.extensions_mut().insert(admin());
    let res = app.clone().oneshot(req).await.expect("infallible");
    assert_eq!(res.status(), StatusCode::OK);
    let values: Vec<&[u8]> = res
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    assert_eq!(values, [SVM_WARNING.as_bytes()]);
    assert_eq!(res.extensions().get::<DeprecatedApi>(), Some(&svm_api("")));
}

// The deprecation warning goes through the one warning recorder (its cap and dedupe): first,
// then the warnings of the request's own body.
#[tokio::test]
async fn the_deprecation_warning_leads_the_recorded_warnings() {
    let app = app_with(Flavor::Kubernetes, &["storagemigration.k8s.io/v1beta1"]).await;
    let mut body: Value = serde_json::from_str(&svm("w")).expect("json");
    body["spec"]["bogus"] = json!(1);
    let path = format!("{SVM_BETA}?fieldValidation=Warn");
    let (created, _) = deprecated_call(&app, "POST", &path, Some(&body.to_string())).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(
        warnings(&created),
        [SVM_WARNING, "299 - \"unknown field \\\"spec.bogus\\\"\""]
    );
}

// The GA version of the same objects, discovery of the deprecated version and a request the
// authorizer refuses carry neither the warning nor the value.
#[tokio::test]
async fn the_ga_version_and_discovery_do_not_warn() {
    let app = app_with(Flavor::Kubernetes, &["storagemigration.k8s.io/v1beta1"]).await;
    created(&app, SVM_BETA, &svm("m")).await;
    for path in [format!("{SVM_GA}/m"), SVM_GA.to_owned()] {
        let (read, api) = deprecated_call(&app, "GET", &path, None).await;
        assert_eq!(read.status, StatusCode::OK, "{path}: {}", read.text());
        assert!(warnings(&read).is_empty(), "{path}: {:?}", warnings(&read));
        assert_eq!(api, None, "{path}");
    }
    for path in [
        "/apis/storagemigration.k8s.io/v1beta1",
        "/apis/storagemigration.k8s.io",
    ] {
        let (read, api) = deprecated_call(&app, "GET", path, None).await;
        assert_eq!(read.status, StatusCode::OK, "{path}: {}", read.text());
        assert!(warnings(&read).is_empty(), "{path}");
        assert_eq!(api, None, "{path}");
    }
    let refused = call(&app, "GET", SVM_BETA, None, Some(bob())).await;
    assert_status(&refused, 403, "Forbidden");
    assert!(warnings(&refused).is_empty());
}

// R-VER-048: core `v1` Endpoints is GA and deprecated by its type, with a replacement and no
// removal release, core spelled `v1`; the platform flavor names its own group. A beta without
// a replacement has no `; use` part.
#[tokio::test]
async fn deprecated_kinds_are_worded_as_kubernetes_words_them() {
    let app = app_with(Flavor::Kubernetes, &[]).await;
    let path = "/api/v1/namespaces/default/endpoints";
    let (list, api) = deprecated_call(&app, "GET", path, None).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.text());
    assert_eq!(
        warnings(&list),
        ["299 - \"v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\""]
    );
    let api = api.expect("deprecated");
    assert_eq!(
        (
            api.group.as_str(),
            api.version.as_str(),
            api.resource.as_str()
        ),
        ("", "v1", "endpoints")
    );
    assert_eq!(api.removed_release, None);

    let platform = app_with(Flavor::Platform, &["coordination.platform.io/v1beta1"]).await;
    let (list, _) = deprecated_call(&platform, "GET", path, None).await;
    assert_eq!(
        warnings(&list),
        [
            "299 - \"v1 Endpoints is deprecated in v1.33+; use discovery.platform.io/v1 \
             EndpointSlice\""
        ]
    );
    let leases = "/apis/coordination.platform.io/v1beta1/namespaces/default/leasecandidates";
    let (list, api) = deprecated_call(&platform, "GET", leases, None).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.text());
    assert_eq!(
        warnings(&list),
        [
            "299 - \"coordination.platform.io/v1beta1 LeaseCandidate is deprecated in v1.36+, \
             unavailable in v1.39+\""
        ]
    );
    assert_eq!(
        api.map(|a| a.removed_release_label()).as_deref(),
        Some("1.39")
    );
}
