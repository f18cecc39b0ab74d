//! Services through the router: defaults, cluster IPs recorded as IPAddress objects, node
//! ports recorded in the range bitmap, 422 for taken and out-of-range values, release on
//! delete and on a failed create, dry runs that reserve nothing, the immutable cluster IP,
//! and the API servers' own Service after bootstrap.

use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::bootstrap::ensure_api_service;
use apiary_api::registry::allocator::NODE_PORTS_KEY;
use apiary_api::registry::allocator::ServiceRanges;
use apiary_api::storage::ReadConsistency;
use apiary_api::storage::Storage;

const SVC_PATH: &str = "/api/v1/namespaces/default/services";
const IP_PATH: &str = "/apis/networking.k8s.io/v1/ipaddresses";

fn svc(name: &str, spec: Value) -> String {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
        .to_string()
}

fn web() -> Value {
    json!({"selector": {"app": "web"}, "ports": [{"port": 80}]})
}

async fn create(app: &Router, name: &str, spec: Value) -> Reply {
    admin_call(app, "POST", SVC_PATH, Some(&svc(name, spec))).await
}

async fn created(app: &Router, name: &str, spec: Value) -> Value {
    let reply = create(app, name, spec).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    reply.json()
}

async fn delete(app: &Router, name: &str) {
    let reply = admin_call(app, "DELETE", &format!("{SVC_PATH}/{name}"), None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
}

async fn ip_address(app: &Router, ip: &str) -> Reply {
    admin_call(app, "GET", &format!("{IP_PATH}/{ip}"), None).await
}

/// The one cause of a 422 for a Service: (field, message).
fn invalid(reply: &Reply) -> (String, String) {
    let s = assert_status(reply, 422, "Invalid");
    let causes = s["details"]["causes"].as_array().expect("causes");
    assert_eq!(causes.len(), 1, "{s}");
    (
        causes[0]["field"].as_str().unwrap_or_default().to_owned(),
        causes[0]["message"].as_str().unwrap_or_default().to_owned(),
    )
}

// R-RES-235: a Service is defaulted as Kubernetes does and gets the first IP of the
// dynamic part of the range, recorded as an IPAddress object naming it.
#[tokio::test]
async fn a_service_gets_a_cluster_ip_recorded_as_an_ip_address() {
    let (app, _) = app().await;
    let s = created(&app, "web", web()).await;
    let spec = &s["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["clusterIP"], "10.96.1.1", "{s}");
    assert_eq!(spec["clusterIPs"], json!(["10.96.1.1"]));
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(
        spec["ports"],
        json!([{"port": 80, "protocol": "TCP", "targetPort": 80}])
    );
    assert_eq!(s["status"], json!({"loadBalancer": {}}));

    let ip = ip_address(&app, "10.96.1.1").await;
    assert_eq!(ip.status, StatusCode::OK, "{}", ip.text());
    let ip = ip.json();
    assert_eq!(
        ip["spec"]["parentRef"],
        json!({"group": "", "resource": "services", "namespace": "default", "name": "web"})
    );
    assert_eq!(
        ip["metadata"]["labels"]["ipaddress.kubernetes.io/managed-by"],
        "ipallocator.k8s.io"
    );

    let next = created(&app, "web2", web()).await;
    assert_eq!(next["spec"]["clusterIP"], "10.96.1.2");
    let headless = created(
        &app,
        "h",
        json!({"clusterIP": "None", "selector": {"a": "b"}}),
    )
    .await;
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    let external = created(
        &app,
        "ext",
        json!({"type": "ExternalName", "externalName": "example.com"}),
    )
    .await;
    assert!(external["spec"].get("clusterIP").is_none(), "{external}");
    let list = admin_call(&app, "GET", IP_PATH, None).await.json();
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2), "{list}");
}

// R-RES-235: a requested IP is taken if free; a taken or out-of-range one is 422 on
// spec.clusterIPs with Kubernetes' message.
#[tokio::test]
async fn a_requested_cluster_ip_must_be_free_and_in_range() {
    let (app, _) = app().await;
    let s = created(
        &app,
        "dns",
        json!({"clusterIP": "10.96.0.10", "ports": [{"port": 53}]}),
    )
    .await;
    assert_eq!(s["spec"]["clusterIPs"], json!(["10.96.0.10"]));

    let taken = create(
        &app,
        "dns2",
        json!({"clusterIP": "10.96.0.10", "ports": [{"port": 53}]}),
    )
    .await;
    let (field, message) = invalid(&taken);
    assert_eq!(field, "spec.clusterIPs");
    assert_eq!(
        message,
        r#"Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated"#
    );

    let outside = create(
        &app,
        "far",
        json!({"clusterIP": "1.2.3.4", "ports": [{"port": 53}]}),
    )
    .await;
    let (field, message) = invalid(&outside);
    assert_eq!(field, "spec.clusterIPs");
    assert!(
        message.ends_with(
            "failed to allocate IP 1.2.3.4: the provided IP (1.2.3.4) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
        ),
        "{message}"
    );
    assert_eq!(
        ip_address(&app, "1.2.3.4").await.status,
        StatusCode::NOT_FOUND
    );
}

// R-RES-062: deleting a Service frees its IP and node ports for the next Service.
#[tokio::test]
async fn delete_releases_the_ip_and_node_ports() {
    let (app, storage) = app().await;
    let spec = json!({"type": "NodePort", "clusterIP": "10.96.0.20",
        "ports": [{"port": 80, "nodePort": 30080}]});
    created(&app, "np", spec.clone()).await;
    let (_, message) = invalid(&create(&app, "np2", spec.clone()).await);
    assert!(message.contains("already allocated"), "{message}");
    delete(&app, "np").await;
    assert_eq!(
        ip_address(&app, "10.96.0.20").await.status,
        StatusCode::NOT_FOUND
    );
    let bitmap = storage
        .get(NODE_PORTS_KEY, ReadConsistency::Linearizable)
        .await
        .expect("get")
        .expect("the bitmap stays");
    assert!(!bitmap.value.is_empty());
    let again = created(&app, "np2", spec).await;
    assert_eq!(again["spec"]["ports"][0]["nodePort"], 30080);
}

// R-RES-235: NodePort Services get a free node port per port; a taken or out-of-range
// request is 422 on spec.ports[i].nodePort; ClusterIP Services may not ask for one.
#[tokio::test]
async fn node_ports_are_allocated_from_the_range() {
    let (app, _) = app().await;
    let s = created(
        &app,
        "np",
        json!({"type": "NodePort", "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81, "nodePort": 30000}]}),
    )
    .await;
    assert_eq!(s["spec"]["ports"][1]["nodePort"], 30000);
    assert_eq!(
        s["spec"]["ports"][0]["nodePort"], 30001,
        "the lowest free one"
    );
    assert_eq!(s["spec"]["externalTrafficPolicy"], "Cluster");

    let taken = create(
        &app,
        "t",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30001}]}),
    )
    .await;
    assert_eq!(
        invalid(&taken),
        (
            "spec.ports[0].nodePort".to_owned(),
            "Invalid value: 30001: provided port is already allocated".to_owned()
        )
    );
    let outside = create(
        &app,
        "o",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 29999}]}),
    )
    .await;
    assert_eq!(
        invalid(&outside),
        (
            "spec.ports[0].nodePort".to_owned(),
            "Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767".to_owned()
        )
    );
    let lb = created(
        &app,
        "lb",
        json!({"type": "LoadBalancer", "ports": [{"port": 443}]}),
    )
    .await;
    assert_eq!(lb["spec"]["ports"][0]["nodePort"], 30002);
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);

    let forbidden = create(
        &app,
        "c",
        json!({"ports": [{"port": 80, "nodePort": 30500}]}),
    )
    .await;
    assert_eq!(
        invalid(&forbidden),
        (
            "spec.ports[0].nodePort".to_owned(),
            "Forbidden: may not be used when `type` is 'ClusterIP'".to_owned()
        )
    );
}

// R-RES-192, R-RES-193: a dry run answers the values it would allocate, refuses taken ones
// as a real create would, and reserves nothing.
#[tokio::test]
async fn dry_run_checks_but_reserves_nothing() {
    let (app, storage) = app().await;
    let keys = storage.keys().await;
    let dry = admin_call(
        &app,
        "POST",
        &format!("{SVC_PATH}?dryRun=All"),
        Some(&svc(
            "np",
            json!({"type": "NodePort", "ports": [{"port": 80}]}),
        )),
    )
    .await;
    assert_eq!(dry.status, StatusCode::CREATED, "{}", dry.text());
    let d = dry.json();
    assert_eq!(d["spec"]["clusterIP"], "10.96.1.1");
    assert_eq!(d["spec"]["ports"][0]["nodePort"], 30000);
    assert_eq!(
        storage.keys().await,
        keys,
        "no IPAddress, no bitmap, no Service"
    );

    created(
        &app,
        "real",
        json!({"clusterIP": "10.96.0.30", "type": "NodePort",
        "ports": [{"port": 80, "nodePort": 30100}]}),
    )
    .await;
    let keys = storage.keys().await;
    let taken_ip = admin_call(
        &app,
        "POST",
        &format!("{SVC_PATH}?dryRun=All"),
        Some(&svc(
            "x",
            json!({"clusterIP": "10.96.0.30", "ports": [{"port": 80}]}),
        )),
    )
    .await;
    assert!(
        invalid(&taken_ip)
            .1
            .contains("provided IP is already allocated")
    );
    let taken_port = admin_call(
        &app,
        "POST",
        &format!("{SVC_PATH}?dryRun=All"),
        Some(&svc(
            "y",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30100}]}),
        )),
    )
    .await;
    assert!(
        invalid(&taken_port)
            .1
            .contains("provided port is already allocated")
    );
    let deleted = admin_call(&app, "DELETE", &format!("{SVC_PATH}/real?dryRun=All"), None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    assert_eq!(storage.keys().await, keys);
    assert_eq!(ip_address(&app, "10.96.0.30").await.status, StatusCode::OK);
}

// R-RES-235: the cluster IP may not change once set; an update that leaves out the
// allocated values keeps them.
#[tokio::test]
async fn the_cluster_ip_is_immutable_and_kept_on_update() {
    let (app, _) = app().await;
    let s = created(
        &app,
        "web",
        json!({"type": "NodePort", "ports": [{"name": "http", "port": 80}]}),
    )
    .await;
    let rv = s["metadata"]["resourceVersion"].clone();
    let item = format!("{SVC_PATH}/web");

    let mut moved = s.clone();
    moved["spec"]["clusterIP"] = "10.96.0.99".into();
    moved["spec"]["clusterIPs"] = json!(["10.96.0.99"]);
    let refused = admin_call(&app, "PUT", &item, Some(&moved.to_string())).await;
    assert_eq!(
        invalid(&refused),
        (
            "spec.clusterIPs[0]".to_owned(),
            r#"Invalid value: ["10.96.0.99"]: may not change once set"#.to_owned()
        )
    );

    let bare = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "resourceVersion": rv, "labels": {"x": "y"}},
        "spec": {"type": "NodePort", "ports": [{"name": "http", "port": 80}]}});
    let updated = admin_call(&app, "PUT", &item, Some(&bare.to_string())).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text());
    let u = updated.json();
    assert_eq!(u["spec"]["clusterIP"], s["spec"]["clusterIP"]);
    assert_eq!(
        u["spec"]["ports"][0]["nodePort"],
        s["spec"]["ports"][0]["nodePort"]
    );
}

// R-RES-235: changing a NodePort Service to ClusterIP frees its node ports; changing it to
// ExternalName frees its IP.
#[tokio::test]
async fn type_changes_free_what_the_new_type_does_not_hold() {
    let (app, _) = app().await;
    let s = created(
        &app,
        "web",
        json!({"type": "NodePort", "clusterIP": "10.96.0.40",
        "ports": [{"port": 80, "nodePort": 30200}]}),
    )
    .await;
    let item = format!("{SVC_PATH}/web");
    let mut to_cluster_ip = s.clone();
    to_cluster_ip["spec"]["type"] = "ClusterIP".into();
    to_cluster_ip["spec"]["ports"] = json!([{"port": 80}]);
    to_cluster_ip["spec"]
        .as_object_mut()
        .expect("spec")
        .remove("externalTrafficPolicy");
    let u = admin_call(&app, "PUT", &item, Some(&to_cluster_ip.to_string())).await;
    assert_eq!(u.status, StatusCode::OK, "{}", u.text());
    created(
        &app,
        "other",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30200}]}),
    )
    .await;

    let mut to_external = u.json();
    to_external["spec"] = json!({"type": "ExternalName", "externalName": "example.com"});
    let e = admin_call(&app, "PUT", &item, Some(&to_external.to_string())).await;
    assert_eq!(e.status, StatusCode::OK, "{}", e.text());
    assert_eq!(
        ip_address(&app, "10.96.0.40").await.status,
        StatusCode::NOT_FOUND
    );
}

// R-RES-235: a create that fails after allocating (the name is taken) frees what it took.
#[tokio::test]
async fn a_failed_create_releases_its_allocation() {
    let (app, _) = app().await;
    created(&app, "web", web()).await;
    let again = create(
        &app,
        "web",
        json!({"clusterIP": "10.96.0.50", "ports": [{"port": 80}]}),
    )
    .await;
    assert_status(&again, 409, "AlreadyExists");
    assert_eq!(
        ip_address(&app, "10.96.0.50").await.status,
        StatusCode::NOT_FOUND
    );
}

// R-RES-235: every broken rule is one cause of one 422.
#[tokio::test]
async fn invalid_services_are_422_with_a_cause_per_rule() {
    let (app, _) = app().await;
    let reply = create(
        &app,
        "bad",
        json!({"type": "Weird", "sessionAffinity": "Sticky",
            "ports": [{"port": 0, "protocol": "ICMP"}, {"port": 80}]}),
    )
    .await;
    let s = assert_status(&reply, 422, "Invalid");
    let fields: Vec<&str> = s["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    for want in [
        "spec.type",
        "spec.ports[0].name",
        "spec.ports[0].port",
        "spec.ports[0].protocol",
        "spec.ports[1].name",
        "spec.sessionAffinity",
    ] {
        assert!(fields.contains(&want), "{want} missing: {s}");
    }
    let list = admin_call(&app, "GET", IP_PATH, None).await.json();
    assert_eq!(
        list["items"],
        json!([]),
        "an invalid Service allocates nothing"
    );
}

// The API servers' Service exists after bootstrap with the first IP of the range, and
// bootstrapping again changes nothing.
#[tokio::test]
async fn bootstrap_creates_the_api_service() {
    let (app, storage) = app().await;
    for _ in 0..2 {
        ensure_api_service(
            storage.as_ref(),
            Flavor::Kubernetes,
            ServiceRanges::default(),
            6443,
            &apiary_api::SystemClock,
            &apiary_api::RandomSource::seeded(0),
        )
        .await
        .expect("bootstrap");
    }
    let reply = admin_call(&app, "GET", &format!("{SVC_PATH}/kubernetes"), None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let s = reply.json();
    assert_eq!(s["spec"]["clusterIP"], "10.96.0.1");
    assert_eq!(
        s["spec"]["ports"],
        json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}])
    );
    assert_eq!(s["metadata"]["labels"]["provider"], "kubernetes");
    assert_eq!(ip_address(&app, "10.96.0.1").await.status, StatusCode::OK);
}

// In the platform flavor the IPAddress objects live under the flavor's networking group,
// and configured ranges are used.
#[tokio::test]
async fn the_platform_flavor_and_configured_ranges() {
    let (storage, _) = backend_in(Flavor::Platform).await;
    let mut config = ApiConfig::new(Flavor::Platform, Arc::new(AlwaysReady));
    config.service_ranges = ServiceRanges::parse("10.0.0.0/24", "31000-31001").expect("ranges");
    let app = apiary_api::router(storage.clone(), config);
    let s = created(
        &app,
        "np",
        json!({"type": "NodePort", "ports": [{"port": 80}]}),
    )
    .await;
    assert_eq!(s["spec"]["clusterIP"], "10.0.0.17");
    assert_eq!(s["spec"]["ports"][0]["nodePort"], 31000);
    let ip = admin_call(
        &app,
        "GET",
        "/apis/networking.platform.io/v1/ipaddresses/10.0.0.17",
        None,
    )
    .await;
    assert_eq!(ip.status, StatusCode::OK, "{}", ip.text());
    assert_eq!(
        ip.json()["metadata"]["labels"]["ipaddress.platform.io/managed-by"],
        "ipallocator.platform.io"
    );
}
