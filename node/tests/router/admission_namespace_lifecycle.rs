//! NamespaceLifecycle as an admission plugin: enabled by default (its checks answer as
//! namespace_lifecycle.rs proves), and with `--disable-admission-plugins=NamespaceLifecycle`
//! objects may be created in namespaces that do not exist and the system namespaces may be
//! deleted, as in Kubernetes.

use std::sync::Arc;

use http::StatusCode;

use super::*;
use apiary_api::admission::PluginSelection;

// No CHECKLIST ID (Kubernetes' NamespaceLifecycle admission): disabled, it checks nothing.
#[tokio::test]
async fn disabled_the_namespace_checks_are_off() {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    let disable = ["NamespaceLifecycle".to_owned()];
    config.admission = PluginSelection::new(&[], &disable).expect("known plugins");
    let app = apiary_api::router(storage.clone(), config);

    let path = "/api/v1/namespaces/nowhere/configmaps";
    let made = admin_call(&app, "POST", path, Some(&cm("x"))).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    let deleted = admin_call(&app, "DELETE", "/api/v1/namespaces/kube-public", None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
}

// No CHECKLIST ID: enabled (the default), the same writes are refused.
#[tokio::test]
async fn enabled_the_namespace_checks_are_on() {
    let (app, _) = app().await;
    let path = "/api/v1/namespaces/nowhere/configmaps";
    let missing = admin_call(&app, "POST", path, Some(&cm("x"))).await;
    assert_status(&missing, 404, "NotFound");
    let refused = admin_call(&app, "DELETE", "/api/v1/namespaces/kube-public", None).await;
    assert_status(&refused, 403, "Forbidden");
}
