//! The audit log of a real replica (issue 13, item 3): `apiary dev` passes the audit flags on,
//! the replica writes `audit.k8s.io/v1` events as JSON lines, and a kubectl request shows up
//! in them with its user, user agent, object and outcome.

use serde_json::Value;

use crate::run::audited_cluster;
use crate::run::events_until;
use crate::run::kubectl;
use crate::run::kubectl_available;
use crate::run::write_file;

const POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n\
rules:\n- level: None\n  nonResourceURLs: [\"/readyz*\", \"/livez*\", \"/healthz*\"]\n\
- level: RequestResponse\n  resources: [{group: \"\", resources: [configmaps]}]\n\
- level: Metadata\n";

#[tokio::test]
async fn a_kubectl_request_shows_up_in_the_replicas_audit_log() {
    if !kubectl_available() {
        return;
    }
    let (_files, cluster) = audited_cluster(POLICY).await;
    let kubeconfig = cluster.kubeconfig();
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: audited\n\
                    data:\n  colour: teal\n";
    let file = write_file(&cluster, "audited.yaml", manifest);
    let out = kubectl(&kubeconfig, &["create", "-f", &file]).await;
    assert!(out.contains("configmap/audited"), "{out}");

    // A relative --audit-log-path is put in the replica's directory.
    let log = cluster.dir().join("node-1").join("audit.log");
    let is_create = |e: &Value| e["verb"] == "create" && e["objectRef"]["name"] == "audited";
    let events = events_until(&log, is_create).await;
    let create = events
        .iter()
        .find(|e| is_create(e))
        .unwrap_or_else(|| panic!("no create event in {events:?}"));
    assert_eq!(create["kind"], "Event");
    assert_eq!(create["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(create["level"], "RequestResponse");
    assert_eq!(create["stage"], "ResponseComplete");
    assert_eq!(create["user"]["username"], "admin");
    assert!(
        create["userAgent"]
            .as_str()
            .is_some_and(|a| a.starts_with("kubectl")),
        "{create}"
    );
    assert_eq!(create["sourceIPs"], serde_json::json!(["127.0.0.1"]));
    assert_eq!(create["objectRef"]["resource"], "configmaps");
    assert_eq!(create["objectRef"]["namespace"], "default");
    assert_eq!(create["responseStatus"]["code"], 201);
    assert_eq!(create["requestObject"]["data"]["colour"], "teal");
    assert_eq!(create["responseObject"]["data"]["colour"], "teal");
    assert_eq!(
        create["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    // RequestReceived is omitted by the policy, health probes are not logged.
    assert!(events.iter().all(|e| e["stage"] != "RequestReceived"));
    assert!(events.iter().all(|e| {
        !e["requestURI"]
            .as_str()
            .unwrap_or_default()
            .starts_with("/readyz")
    }));
}
