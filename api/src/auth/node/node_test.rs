//! Tests of the Node authorizer over a graph fed as the reflectors feed it: a node `n1` and a
//! node `n2`, pods bound to each with their secrets, ConfigMaps, claims and volumes; which
//! reads and writes each node agent is allowed, and how the graph follows deletes, rebinds
//! and relists.

use std::sync::Arc;

use http::Method;
use serde_json::Value;
use serde_json::json;

use super::*;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::request::QueryParams;
use crate::request::RequestInfo;

const PODS: &str = "/registry/core/pods/";
const VOLUMES: &str = "/registry/core/persistentvolumes/";
const ATTACHMENTS: &str = "/registry/storage.k8s.io/volumeattachments/";

/// The graph with the Kubernetes flavor's prefixes, and the policy with selectors on/off.
struct Fixture {
    graph: GraphCache,
    policy: Policy,
}

impl Fixture {
    fn new(with_selectors: bool) -> Self {
        let flavor = Flavor::Kubernetes;
        Self {
            graph: GraphCache::new(flavor),
            policy: Policy {
                flavor,
                with_selectors,
            },
        }
    }

    /// Stores `object` at `prefix` + `rest`.
    fn put(&self, prefix: &str, rest: &str, object: Value) {
        let event = CacheEvent::Upsert {
            key: format!("{prefix}{rest}"),
            object: Arc::new(object),
        };
        self.graph.apply(prefix, vec![event]);
    }

    fn delete(&self, prefix: &str, rest: &str) {
        let key = format!("{prefix}{rest}");
        self.graph.apply(prefix, vec![CacheEvent::Delete { key }]);
    }

    /// The decision on `method target` (path and query) for `user`.
    fn ask(&self, user: &UserInfo, method: Method, target: &str) -> Decision {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let request = RequestInfo::parse(&method, path, &QueryParams::parse(query));
        let attributes = Attributes {
            user,
            request: &request,
        };
        decide(&self.policy, &self.graph, &attributes)
    }

    /// Whether `node`'s agent is allowed `method target`.
    fn allows(&self, node: &str, method: Method, target: &str) -> bool {
        self.ask(&agent(node), method, target) == Decision::Allow
    }
}

fn agent(node: &str) -> UserInfo {
    UserInfo {
        name: format!("system:node:{node}"),
        groups: vec!["system:nodes".into(), "system:authenticated".into()],
        ..UserInfo::default()
    }
}

/// A pod in `ns` bound to `node` (none: not scheduled) with `spec` merged in.
fn pod(name: &str, node: Option<&str>, spec: Value) -> Value {
    let mut pod = json!({
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    });
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    for (k, v) in spec.as_object().into_iter().flatten() {
        pod["spec"][k] = v.clone();
    }
    pod
}

/// A pod on `n1` referencing secrets, ConfigMaps and claims every way a pod can, a pod on
/// `n2` with its own secret, and the volume bound to `n1`'s claim with its CSI secret.
fn cluster(with_selectors: bool) -> Fixture {
    let f = Fixture::new(with_selectors);
    let env_ref = |kind: &str, name: &str| json!({"name": "E", "valueFrom": {kind: {"name": name, "key": "k"}}});
    let spec = json!({
        "serviceAccountName": "sa1",
        "imagePullSecrets": [{"name": "pull"}],
        "initContainers": [{"name": "i", "env": [env_ref("secretKeyRef", "init-env")]}],
        "containers": [{
            "name": "c",
            "env": [env_ref("configMapKeyRef", "cm-env")],
            "envFrom": [{"secretRef": {"name": "env-from"}}, {"configMapRef": {"name": "cm-from"}}],
        }],
        "ephemeralContainers": [{"name": "e", "envFrom": [{"secretRef": {"name": "debug"}}]}],
        "volumes": [
            {"name": "s", "secret": {"secretName": "vol"}},
            {"name": "c", "configMap": {"name": "cm-vol"}},
            {"name": "p", "projected": {"sources": [
                {"secret": {"name": "projected"}}, {"configMap": {"name": "cm-projected"}}]}},
            {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        ],
    });
    f.put(PODS, "ns/p1", pod("p1", Some("n1"), spec));
    let other = json!({"volumes": [{"name": "s", "secret": {"secretName": "other"}}]});
    f.put(PODS, "ns/p2", pod("p2", Some("n2"), other));
    let volume = json!({"metadata": {"name": "pv1"}, "spec": {
        "claimRef": {"namespace": "ns", "name": "data"},
        "csi": {"driver": "d", "volumeHandle": "h",
            "nodePublishSecretRef": {"name": "csi-publish", "namespace": "storage"},
            "controllerPublishSecretRef": {"name": "csi-controller", "namespace": "storage"}},
    }});
    f.put(VOLUMES, "pv1", volume);
    let attachment = json!({"metadata": {"name": "va1"}, "spec": {"nodeName": "n1"}});
    f.put(ATTACHMENTS, "va1", attachment);
    f
}

// R-ACC-169
#[test]
fn only_node_agents_get_an_opinion() {
    let f = cluster(true);
    let secret = "/api/v1/namespaces/ns/secrets/vol";
    let not_nodes = [
        UserInfo {
            name: "system:node:n1".into(),
            groups: vec!["system:authenticated".into()],
            ..UserInfo::default()
        },
        UserInfo {
            name: "n1".into(),
            groups: vec!["system:nodes".into()],
            ..UserInfo::default()
        },
        UserInfo {
            name: "admin".into(),
            groups: vec!["system:masters".into()],
            ..UserInfo::default()
        },
    ];
    for user in &not_nodes {
        for target in [secret, "/api/v1/services", "/healthz"] {
            let decision = f.ask(user, Method::GET, target);
            assert_eq!(decision, Decision::NoOpinion(String::new()), "{user:?}");
        }
    }
    let nameless = agent("");
    assert_eq!(
        f.ask(&nameless, Method::GET, secret),
        Decision::NoOpinion(r#"unknown node for user "system:node:""#.into())
    );
    assert!(f.allows("n1", Method::GET, secret));
}

// R-ACC-170
#[test]
fn node_agents_read_services_endpoints_nodes_and_pods() {
    let f = cluster(false);
    for target in [
        "/api/v1/services",
        "/api/v1/namespaces/ns/services/s?watch=true",
        "/api/v1/namespaces/ns/endpoints/s",
        "/api/v1/nodes",
        "/api/v1/nodes/n2",
        "/api/v1/pods",
        "/api/v1/namespaces/ns/pods/p2",
    ] {
        assert!(f.allows("n1", Method::GET, target), "{target}");
    }
    assert!(!f.allows("n1", Method::GET, "/api/v1/namespaces/ns/endpoints"));
    assert!(!f.allows(
        "n1",
        Method::GET,
        "/api/v1/namespaces/ns/serviceaccounts/sa1"
    ));
    assert!(!f.allows("n1", Method::GET, "/healthz"));
}

// R-ACC-171
#[test]
fn secrets_configmaps_claims_and_volumes_only_of_the_nodes_pods() {
    let f = cluster(true);
    let ns = "/api/v1/namespaces/ns";
    for secret in ["pull", "init-env", "env-from", "debug", "vol", "projected"] {
        let target = format!("{ns}/secrets/{secret}");
        assert!(f.allows("n1", Method::GET, &target), "{target}");
        assert!(!f.allows("n2", Method::GET, &target), "{target}");
    }
    for cm in ["cm-env", "cm-from", "cm-vol", "cm-projected"] {
        let target = format!("{ns}/configmaps/{cm}");
        assert!(f.allows("n1", Method::GET, &target), "{target}");
        assert!(!f.allows("n2", Method::GET, &target), "{target}");
    }
    for claim in ["data", "p1-scratch"] {
        let target = format!("{ns}/persistentvolumeclaims/{claim}");
        assert!(f.allows("n1", Method::GET, &target), "{target}");
        assert!(!f.allows("n2", Method::GET, &target), "{target}");
    }
    assert!(f.allows("n1", Method::GET, "/api/v1/persistentvolumes/pv1"));
    assert!(!f.allows("n2", Method::GET, "/api/v1/persistentvolumes/pv1"));
    let csi = "/api/v1/namespaces/storage/secrets/csi-publish";
    assert!(f.allows("n1", Method::GET, csi));
    assert!(!f.allows("n2", Method::GET, csi));
    let controller_only = "/api/v1/namespaces/storage/secrets/csi-controller";
    assert!(!f.allows("n1", Method::GET, controller_only));
    let va = "/apis/storage.k8s.io/v1/volumeattachments/va1";
    assert!(f.allows("n1", Method::GET, va));
    assert!(!f.allows("n2", Method::GET, va));
    // Another node's secret, a secret no pod uses, and collections are refused.
    assert!(!f.allows("n1", Method::GET, &format!("{ns}/secrets/other")));
    assert!(f.allows("n2", Method::GET, &format!("{ns}/secrets/other")));
    assert!(!f.allows("n1", Method::GET, &format!("{ns}/secrets/unused")));
    assert_eq!(
        f.ask(&agent("n1"), Method::GET, &format!("{ns}/secrets")),
        Decision::NoOpinion("No Object name found".into())
    );
    assert!(!f.allows("n1", Method::GET, "/api/v1/secrets?watch=true"));
    assert!(!f.allows("n1", Method::GET, &format!("{ns}/persistentvolumeclaims")));
    assert!(!f.allows("n1", Method::GET, "/api/v1/persistentvolumes"));
    // A watch of one reachable secret names it with metadata.name, as Kubernetes allows.
    let one = format!("{ns}/secrets?watch=true&fieldSelector=metadata.name%3Dvol");
    assert!(f.allows("n1", Method::GET, &one));
    // Reads only: the graph never grants a write.
    assert!(!f.allows("n1", Method::PUT, &format!("{ns}/secrets/vol")));
    assert!(!f.allows("n1", Method::DELETE, &format!("{ns}/configmaps/cm-vol")));
    assert!(!f.allows(
        "n1",
        Method::PUT,
        &format!("{ns}/persistentvolumeclaims/data")
    ));
    // Tokens of its pods' service account; claim status of its pods' claims.
    let token = format!("{ns}/serviceaccounts/sa1/token");
    assert!(f.allows("n1", Method::POST, &token));
    assert!(!f.allows("n2", Method::POST, &token));
    let status = format!("{ns}/persistentvolumeclaims/data/status");
    assert!(f.allows("n1", Method::PATCH, &status));
    assert!(!f.allows("n2", Method::PATCH, &status));
}

// R-ACC-172
#[test]
fn with_selectors_a_node_reads_only_its_own_node_and_pods() {
    let f = cluster(true);
    assert!(f.allows("n1", Method::GET, "/api/v1/nodes/n1"));
    assert_eq!(
        f.ask(&agent("n1"), Method::GET, "/api/v1/nodes/n2"),
        Decision::NoOpinion("node 'n1' cannot read 'n2', only its own Node object".into())
    );
    assert!(!f.allows("n1", Method::GET, "/api/v1/nodes"));
    assert!(f.allows(
        "n1",
        Method::GET,
        "/api/v1/nodes?fieldSelector=metadata.name%3Dn1"
    ));
    assert!(!f.allows(
        "n1",
        Method::GET,
        "/api/v1/nodes?fieldSelector=metadata.name%3Dn2"
    ));
    let mine = "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn1";
    assert!(f.allows("n1", Method::GET, mine));
    assert!(!f.allows("n2", Method::GET, mine));
    assert_eq!(
        f.ask(&agent("n1"), Method::GET, "/api/v1/pods"),
        Decision::NoOpinion("can only list/watch pods with spec.nodeName field selector".into())
    );
    assert!(f.allows("n1", Method::GET, "/api/v1/namespaces/ns/pods/p1"));
    assert!(!f.allows("n1", Method::GET, "/api/v1/namespaces/ns/pods/p2"));
    let named = "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1";
    assert!(f.allows("n1", Method::GET, named));
    assert!(!f.allows("n2", Method::GET, named));
    // Services stay readable in full.
    assert!(f.allows("n1", Method::GET, "/api/v1/services"));
}

// R-ACC-173
#[test]
fn node_agents_write_nodes_pods_status_and_events() {
    for with_selectors in [false, true] {
        let f = cluster(with_selectors);
        for (method, target) in [
            (Method::POST, "/api/v1/nodes"),
            (Method::PUT, "/api/v1/nodes/n1"),
            (Method::PATCH, "/api/v1/nodes/n1/status"),
            (Method::POST, "/api/v1/namespaces/ns/pods"),
            (Method::DELETE, "/api/v1/namespaces/ns/pods/p1"),
            (Method::PUT, "/api/v1/namespaces/ns/pods/p1/status"),
            (Method::POST, "/api/v1/namespaces/ns/pods/p1/eviction"),
            (Method::POST, "/api/v1/namespaces/ns/events"),
            (Method::PATCH, "/api/v1/namespaces/ns/events/e"),
        ] {
            assert!(f.allows("n1", method.clone(), target), "{method} {target}");
        }
        for (method, target) in [
            (Method::DELETE, "/api/v1/nodes/n1"),
            (Method::PUT, "/api/v1/namespaces/ns/pods/p1"),
            (Method::DELETE, "/api/v1/namespaces/ns/events/e"),
            (Method::POST, "/api/v1/namespaces/ns/secrets"),
            (Method::POST, "/api/v1/namespaces/ns/services"),
            (Method::POST, "/api/v1/namespaces/ns/pods/p1/binding"),
            (Method::GET, "/api/v1/nodes/n1/proxy"),
        ] {
            assert!(!f.allows("n1", method.clone(), target), "{method} {target}");
        }
    }
}

// R-ACC-173 (leases and CSINodes: only the node's own by name)
#[test]
fn node_agents_write_their_own_lease_and_csinode() {
    let f = cluster(true);
    let leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
    assert!(f.allows("n1", Method::POST, leases));
    assert!(f.allows("n1", Method::PUT, &format!("{leases}/n1")));
    assert!(!f.allows("n1", Method::PUT, &format!("{leases}/n2")));
    assert!(!f.allows("n1", Method::GET, leases));
    let elsewhere = "/apis/coordination.k8s.io/v1/namespaces/default/leases/n1";
    assert!(!f.allows("n1", Method::GET, elsewhere));
    let csinodes = "/apis/storage.k8s.io/v1/csinodes";
    assert!(f.allows("n1", Method::POST, csinodes));
    assert!(f.allows("n1", Method::PATCH, &format!("{csinodes}/n1")));
    assert!(!f.allows("n1", Method::DELETE, &format!("{csinodes}/n2")));
}

// R-ACC-175
#[test]
fn node_agents_ask_authentication_and_authorization_questions() {
    let f = cluster(true);
    for target in [
        "/apis/authentication.k8s.io/v1/tokenreviews",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        "/apis/authorization.k8s.io/v1/namespaces/ns/localsubjectaccessreviews",
        "/apis/certificates.k8s.io/v1/certificatesigningrequests",
    ] {
        assert!(f.allows("n1", Method::POST, target), "{target}");
    }
    let csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests?watch=true";
    assert!(f.allows("n1", Method::GET, csrs));
    let approval = "/apis/certificates.k8s.io/v1/certificatesigningrequests/c/approval";
    assert!(!f.allows("n1", Method::PUT, approval));
}

// R-ACC-171: the graph follows the store: a deleted pod's secret becomes unreadable unless
// another pod on the node still uses it; a pod recreated on another node moves its access.
#[test]
fn deletes_and_rebinds_move_access() {
    let f = cluster(true);
    let vol = "/api/v1/namespaces/ns/secrets/vol";
    let twin = json!({"volumes": [{"name": "s", "secret": {"secretName": "vol"}}]});
    f.put(PODS, "ns/twin", pod("twin", Some("n1"), twin.clone()));
    f.delete(PODS, "ns/p1");
    assert!(
        f.allows("n1", Method::GET, vol),
        "the twin pod still uses it"
    );
    assert!(!f.allows("n1", Method::GET, "/api/v1/namespaces/ns/secrets/pull"));
    assert!(!f.allows("n1", Method::GET, "/api/v1/persistentvolumes/pv1"));
    assert!(!f.allows(
        "n1",
        Method::GET,
        "/api/v1/namespaces/storage/secrets/csi-publish"
    ));
    f.put(PODS, "ns/twin", pod("twin", Some("n2"), twin.clone()));
    assert!(!f.allows("n1", Method::GET, vol));
    assert!(f.allows("n2", Method::GET, vol));
    assert!(f.allows("n2", Method::GET, "/api/v1/namespaces/ns/pods/twin"));
    assert!(!f.allows("n1", Method::GET, "/api/v1/namespaces/ns/pods/twin"));
    // A pod not scheduled yet grants nothing.
    f.put(PODS, "ns/twin", pod("twin", None, twin));
    assert!(!f.allows("n2", Method::GET, vol));
    // A volume released from its claim no longer leads to its secrets.
    f.put(
        PODS,
        "ns/p1",
        pod(
            "p1",
            Some("n1"),
            json!({"volumes": [
        {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}}]}),
        ),
    );
    assert!(f.allows(
        "n1",
        Method::GET,
        "/api/v1/namespaces/storage/secrets/csi-publish"
    ));
    f.put(
        VOLUMES,
        "pv1",
        json!({"metadata": {"name": "pv1"}, "spec": {}}),
    );
    assert!(!f.allows("n1", Method::GET, "/api/v1/persistentvolumes/pv1"));
    assert!(!f.allows(
        "n1",
        Method::GET,
        "/api/v1/namespaces/storage/secrets/csi-publish"
    ));
}

// R-ACC-171: a relist replaces what the graph knew of that kind, and only of that kind.
#[test]
fn a_relist_drops_what_is_gone() {
    let f = cluster(true);
    let kept = pod(
        "p2",
        Some("n2"),
        json!({"volumes": [
        {"name": "s", "secret": {"secretName": "other"}}]}),
    );
    f.graph
        .replace(PODS, vec![(format!("{PODS}ns/p2"), Arc::new(kept))]);
    assert!(!f.allows("n1", Method::GET, "/api/v1/namespaces/ns/secrets/vol"));
    assert!(f.allows("n2", Method::GET, "/api/v1/namespaces/ns/secrets/other"));
    assert!(f.allows(
        "n1",
        Method::GET,
        "/apis/storage.k8s.io/v1/volumeattachments/va1"
    ));
}

// R-ACC-171: a mirror pod (created by the node agent itself) grants nothing but itself.
#[test]
fn a_mirror_pod_grants_nothing_more() {
    let f = Fixture::new(true);
    let mut mirror = pod(
        "m",
        Some("n1"),
        json!({"volumes": [
        {"name": "s", "secret": {"secretName": "stolen"}}]}),
    );
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
    f.put(PODS, "ns/m", mirror);
    assert!(f.allows("n1", Method::GET, "/api/v1/namespaces/ns/pods/m"));
    assert!(!f.allows("n1", Method::GET, "/api/v1/namespaces/ns/secrets/stolen"));
}

// R-ACC-171: resource claims named by the pod or generated from a template (its status).
#[test]
fn resource_claims_of_the_nodes_pods() {
    let f = Fixture::new(true);
    let spec = json!({"resourceClaims": [
        {"name": "direct", "resourceClaimName": "gpu"},
        {"name": "templated", "resourceClaimTemplateName": "t"}]});
    let mut p = pod("p", Some("n1"), spec);
    f.put(PODS, "ns/p", p.clone());
    let claims = "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims";
    assert!(f.allows("n1", Method::GET, &format!("{claims}/gpu")));
    assert!(!f.allows("n1", Method::GET, &format!("{claims}/p-templated-x")));
    p["status"] = json!({"resourceClaimStatuses": [
        {"name": "templated", "resourceClaimName": "p-templated-x"}]});
    f.put(PODS, "ns/p", p);
    assert!(f.allows("n1", Method::GET, &format!("{claims}/p-templated-x")));
    assert!(!f.allows("n2", Method::GET, &format!("{claims}/gpu")));
}

// R-ACC-169, R-ACC-095: the rules review cannot list a node's permissions, and its
// evaluationError says so as Kubernetes does; others get none from here.
#[tokio::test]
async fn rules_of_a_node_are_not_listed() {
    let f = Fixture::new(true);
    let authorizer = NodeAuthorizer {
        policy: f.policy,
        graph: Arc::new(f.graph),
    };
    let node = authorizer
        .rules(&agent("n1"), "ns")
        .await
        .expect("an answer");
    assert!(node.incomplete && node.resource.is_empty());
    assert_eq!(
        node.evaluation_errors,
        ["node authorizer does not support user rule resolution"]
    );
    let bob = UserInfo {
        name: "bob".into(),
        ..UserInfo::default()
    };
    assert_eq!(authorizer.rules(&bob, "ns").await, Some(Rules::default()));
}

// R-ACC-173: ResourceSlices: any create (admission checks the node), the node's own by
// name, collections only with the node's `nodeName` selector.
#[test]
fn resource_slices_of_the_node() {
    let f = Fixture::new(true);
    let slices = "/registry/resource.k8s.io/resourceslices/";
    f.put(
        slices,
        "s1",
        json!({"metadata": {"name": "s1"}, "spec": {"nodeName": "n1"}}),
    );
    let path = "/apis/resource.k8s.io/v1/resourceslices";
    assert!(f.allows("n1", Method::POST, path));
    assert!(f.allows("n1", Method::PUT, &format!("{path}/s1")));
    assert!(!f.allows("n2", Method::GET, &format!("{path}/s1")));
    assert!(f.allows(
        "n1",
        Method::GET,
        &format!("{path}?fieldSelector=nodeName%3Dn1")
    ));
    assert!(!f.allows(
        "n1",
        Method::GET,
        &format!("{path}?fieldSelector=nodeName%3Dn2")
    ));
    assert!(!f.allows("n1", Method::DELETE, path));
    f.delete(slices, "s1");
    assert!(!f.allows("n1", Method::GET, &format!("{path}/s1")));
}
