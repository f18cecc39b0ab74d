//! Health endpoints, ready and not ready.

use std::sync::Arc;

use super::*;
use apiary_api::health::Readiness;

struct NotReady;

impl Readiness for NotReady {
    fn check(&self) -> Result<(), String> {
        Err("no leader".into())
    }
}

// R-VER-036, R-VER-037, R-VER-039, R-VER-040, R-VER-041, R-VER-042, R-VER-043, R-VER-044
#[tokio::test]
async fn healthy_endpoints() {
    let (app, _) = app().await;
    let plain = call(&app, "GET", "/readyz", None, None).await;
    assert_eq!(
        (plain.status, plain.text().as_str()),
        (StatusCode::OK, "ok")
    );
    let verbose = call(&app, "GET", "/readyz?verbose", None, None).await;
    assert_eq!(
        verbose.text(),
        "[+]ping ok\n[+]log ok\n[+]storage ok\nreadyz check passed\n"
    );
    let livez = call(&app, "GET", "/livez?verbose=1&exclude=log", None, None).await;
    assert_eq!(
        livez.text(),
        "[+]ping ok\n[+]log excluded: ok\nlivez check passed\n"
    );
    let healthz = call(&app, "GET", "/healthz?verbose", None, None).await;
    assert!(healthz.text().ends_with("healthz check passed\n"));
    let one = call(&app, "GET", "/livez/ping", None, None).await;
    assert_eq!((one.status, one.text().as_str()), (StatusCode::OK, "ok"));
    let unknown = call(&app, "GET", "/livez/nope", None, None).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let post = call(&app, "POST", "/livez", None, None).await;
    assert_status(&post, 405, "MethodNotAllowed");
}

// R-VER-047, R-VER-044
#[tokio::test]
async fn not_ready_fails_readyz_but_not_livez() {
    let storage = Arc::new(empty_backend());
    let config = ApiConfig::new(Flavor::Platform, Arc::new(NotReady));
    let app = apiary_api::router(storage, config);
    let r = call(&app, "GET", "/readyz", None, None).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        r.text(),
        "[+]ping ok\n[+]log ok\n[-]storage failed: reason withheld\nreadyz check failed\n"
    );
    assert!(!r.text().contains("no leader"), "reasons are withheld");
    let one = call(&app, "GET", "/readyz/storage", None, None).await;
    assert_eq!(one.status, StatusCode::INTERNAL_SERVER_ERROR);
    let excluded = call(&app, "GET", "/readyz?exclude=storage", None, None).await;
    assert_eq!(excluded.status, StatusCode::OK);
    let live = call(&app, "GET", "/livez", None, None).await;
    assert_eq!(live.status, StatusCode::OK);
}
