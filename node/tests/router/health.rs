//! Health endpoints, ready and not ready.

use std::sync::Arc;

use super::*;
use apiary_api::health::CheckScope;
use apiary_api::health::HealthCheck;
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
        "[+]ping ok\n[+]log ok\n[+]etcd-readiness ok\nreadyz check passed\n"
    );
    let livez = call(&app, "GET", "/livez?verbose=1&exclude=log", None, None).await;
    assert_eq!(
        livez.text(),
        "[+]ping ok\n[+]log excluded: ok\nlivez check passed\n"
    );
    let healthz = call(&app, "GET", "/healthz?verbose", None, None).await;
    assert_eq!(
        healthz.text(),
        "[+]ping ok\n[+]log ok\nhealthz check passed\n"
    );
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
        "[+]ping ok\n[+]log ok\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n"
    );
    assert!(!r.text().contains("no leader"), "reasons are withheld");
    let one = call(&app, "GET", "/readyz/etcd-readiness", None, None).await;
    assert_eq!(one.status, StatusCode::INTERNAL_SERVER_ERROR);
    let excluded = call(&app, "GET", "/readyz?exclude=etcd-readiness", None, None).await;
    assert_eq!(excluded.status, StatusCode::OK);
    let live = call(&app, "GET", "/livez", None, None).await;
    assert_eq!(live.status, StatusCode::OK);
}

/// A replica with kube-apiserver's named checks: raft runs, the system namespaces hook is
/// done but the Service hook is not, and shutdown has begun.
struct Starting;

impl Readiness for Starting {
    fn check(&self) -> Result<(), String> {
        Err("starting".into())
    }

    fn checks(&self) -> Vec<HealthCheck> {
        let check = |name, scope| HealthCheck { name, scope };
        vec![
            check("etcd", CheckScope::Health),
            check("etcd-readiness", CheckScope::Readiness),
            check(
                "poststarthook/start-system-namespaces-controller",
                CheckScope::Health,
            ),
            check("poststarthook/bootstrap-controller", CheckScope::Health),
            check("shutdown", CheckScope::Readiness),
        ]
    }

    fn run(&self, name: &str) -> Result<(), String> {
        match name {
            "poststarthook/bootstrap-controller" | "shutdown" => Err("no".into()),
            _ => Ok(()),
        }
    }
}

// R-VER-040, R-VER-042, R-VER-044, R-VER-046, R-VER-047
#[tokio::test]
async fn named_checks_by_scope_path_and_exclusion() {
    let storage = Arc::new(empty_backend());
    let app = apiary_api::router(
        storage,
        ApiConfig::new(Flavor::Kubernetes, Arc::new(Starting)),
    );
    let readyz = call(&app, "GET", "/readyz?verbose", None, None).await;
    assert_eq!(readyz.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        readyz.text(),
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n\
         [+]poststarthook/start-system-namespaces-controller ok\n\
         [-]poststarthook/bootstrap-controller failed: reason withheld\n\
         [-]shutdown failed: reason withheld\nreadyz check failed\n"
    );
    // Readiness-only checks are not run by /livez nor /healthz.
    let livez = call(&app, "GET", "/livez", None, None).await;
    assert_eq!(
        livez.text(),
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n\
         [+]poststarthook/start-system-namespaces-controller ok\n\
         [-]poststarthook/bootstrap-controller failed: reason withheld\nlivez check failed\n"
    );
    let healthz = call(&app, "GET", "/healthz", None, None).await;
    assert!(healthz.text().ends_with("healthz check failed\n"));
    assert!(!healthz.text().contains("shutdown"));

    // One check by its path, slashes included; a check the endpoint does not run is unknown.
    let hook = call(
        &app,
        "GET",
        "/livez/poststarthook/start-system-namespaces-controller",
        None,
        None,
    )
    .await;
    assert_eq!((hook.status, hook.text().as_str()), (StatusCode::OK, "ok"));
    let failing = call(
        &app,
        "GET",
        "/readyz/poststarthook/bootstrap-controller",
        None,
        None,
    )
    .await;
    assert_eq!(failing.status, StatusCode::INTERNAL_SERVER_ERROR);
    let shutdown = call(&app, "GET", "/readyz/shutdown", None, None).await;
    assert_eq!(shutdown.status, StatusCode::INTERNAL_SERVER_ERROR);
    let not_live = call(&app, "GET", "/livez/shutdown", None, None).await;
    assert_eq!(not_live.status, StatusCode::NOT_FOUND);

    // Excluding the failing checks makes the endpoint pass; an exclusion matching no check is
    // reported and changes nothing.
    let path =
        "/readyz?verbose&exclude=shutdown&exclude=poststarthook/bootstrap-controller&exclude=nope";
    let excluded = call(&app, "GET", path, None, None).await;
    assert_eq!(excluded.status, StatusCode::OK);
    assert_eq!(
        excluded.text(),
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n\
         [+]poststarthook/start-system-namespaces-controller ok\n\
         [+]poststarthook/bootstrap-controller excluded: ok\n\
         [+]shutdown excluded: ok\n\
         warn: some health checks cannot be excluded: no matches for \"nope\"\n\
         readyz check passed\n"
    );
}
