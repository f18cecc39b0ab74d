//! The `DefaultIngressClass` plugin: Ingresses naming no class get the default IngressClass.

use std::time::Duration;

use serde_json::Value;
use serde_json::json;

use super::admin_call;
use super::app;
use super::created;
use http::StatusCode;

const INGRESSES: &str = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
const CLASSES: &str = "/apis/networking.k8s.io/v1/ingressclasses";

fn ingress(name: &str, annotations: Value, class: Option<&str>) -> String {
    let mut ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}});
    if let Some(class) = class {
        ingress["spec"]["ingressClassName"] = json!(class);
    }
    ingress.to_string()
}

fn class(name: &str, default: bool) -> String {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
           "metadata": {"name": name, "annotations": {
               "ingressclass.kubernetes.io/is-default-class": default.to_string()}},
           "spec": {"controller": "example.com/ingress"}})
    .to_string()
}

#[tokio::test]
async fn ingresses_naming_no_class_get_the_default_one() {
    let (app, _) = app().await;
    created(&app, CLASSES, &class("other", false)).await;
    created(&app, CLASSES, &class("nginx", true)).await;
    let path = format!("{INGRESSES}?dryRun=All");
    let mut last = Value::Null;
    for _ in 0..100 {
        let reply = admin_call(
            &app,
            "POST",
            &path,
            Some(&ingress("probe", json!({}), None)),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        last = reply.json();
        if last["spec"]["ingressClassName"] == "nginx" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(last["spec"]["ingressClassName"], "nginx", "{last}");

    let named = created(&app, INGRESSES, &ingress("named", json!({}), Some("other"))).await;
    assert_eq!(named["spec"]["ingressClassName"], "other");
    let annotated = json!({"kubernetes.io/ingress.class": "other"});
    let stored = created(&app, INGRESSES, &ingress("annotated", annotated, None)).await;
    assert_eq!(
        stored["spec"].get("ingressClassName"),
        None,
        "the annotation names a class"
    );
}
