//! The authentication and authorization stages.

use super::*;

// R-RES-002, R-ACC-002, R-ACC-084, R-ACC-085: a request without credentials is
// `system:anonymous`, whom no authorizer allows anything; bad credentials stay 401.
#[tokio::test]
async fn no_credentials_is_anonymous_and_denied() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    for (method, path, message) in [
        (
            "GET",
            CM_PATH,
            "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"",
        ),
        (
            "POST",
            CM_PATH,
            "configmaps is forbidden: User \"system:anonymous\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"default\"",
        ),
        (
            "GET",
            "/api",
            "forbidden: User \"system:anonymous\" cannot get path \"/api\"",
        ),
        (
            "GET",
            "/apis",
            "forbidden: User \"system:anonymous\" cannot get path \"/apis\"",
        ),
    ] {
        let r = call(&app, method, path, Some(&cm("x")), None).await;
        let s = assert_status(&r, 403, "Forbidden");
        assert_eq!(s["message"], message);
    }
    let garbage = call(
        &app,
        "GET",
        CM_PATH,
        None,
        Some(ClientCertificate::new(b"junk".to_vec())),
    )
    .await;
    assert_status(&garbage, 401, "Unauthorized");
    assert_eq!(storage.keys().await, before);
}

// R-ACC-002, R-ACC-088, R-RES-016
#[tokio::test]
async fn users_outside_system_masters_get_403_worded_as_kubernetes() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    let get = call(&app, "GET", &format!("{CM_PATH}/x"), None, Some(bob())).await;
    let s = assert_status(&get, 403, "Forbidden");
    assert_eq!(
        s["message"],
        "configmaps \"x\" is forbidden: User \"bob\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    assert_eq!(
        s["details"],
        serde_json::json!({"name":"x","kind":"configmaps"})
    );
    let list = call(&app, "GET", "/api/v1/namespaces", None, Some(bob())).await;
    assert_eq!(
        assert_status(&list, 403, "Forbidden")["message"],
        "namespaces is forbidden: User \"bob\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
    );
    let create = call(&app, "POST", CM_PATH, Some(&cm("x")), Some(bob())).await;
    assert_status(&create, 403, "Forbidden");
    let path = call(&app, "GET", "/api", None, Some(bob())).await;
    assert_eq!(
        assert_status(&path, 403, "Forbidden")["message"],
        "forbidden: User \"bob\" cannot get path \"/api\""
    );
    assert_eq!(
        storage.keys().await,
        before,
        "a denied write stores nothing"
    );
}

// R-ACC-113, R-ACC-168
#[tokio::test]
async fn system_masters_may_do_everything() {
    let (app, _) = app().await;
    let r = admin_call(&app, "GET", "/api/v1/namespaces/kube-system", None).await;
    assert_eq!(r.status, StatusCode::OK);
}

// R-VER-036, R-VER-037, R-VER-039
#[tokio::test]
async fn health_and_version_need_no_credentials() {
    let (app, _) = app().await;
    for path in ["/livez", "/readyz", "/healthz", "/livez/ping", "/version"] {
        let r = call(&app, "GET", path, None, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
    }
}
