//! `SetDefaults_PodSpec`, `SetDefaults_Container` and friends: the values a pod spec gets
//! when its fields are left out (restart and DNS policy, scheduler, grace period, pull
//! policy by image tag, termination message, port protocol, probe timings, volume modes).

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::registry::builtin::fields::default_key;
use crate::registry::builtin::fields::object_mut;

/// The file mode secret, configMap, downwardAPI and projected volumes default to (0644).
const DEFAULT_MODE: i64 = 420;

/// Fills the defaults of the pod spec at `pointer` (`/spec`, `/spec/template/spec`).
pub fn default_pod_spec(obj: &mut Value, pointer: &str) {
    let Some(spec) = object_mut(obj, pointer) else {
        return;
    };
    default_key(spec, "dnsPolicy", "ClusterFirst".into());
    default_key(spec, "restartPolicy", "Always".into());
    default_key(spec, "terminationGracePeriodSeconds", 30.into());
    default_key(spec, "securityContext", json!({}));
    default_key(spec, "schedulerName", "default-scheduler".into());
    default_key(spec, "enableServiceLinks", true.into());
    let host_network = spec.get("hostNetwork").and_then(Value::as_bool) == Some(true);
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            for c in containers.iter_mut().filter_map(Value::as_object_mut) {
                default_container(c, host_network);
            }
        }
    }
    if let Some(Value::Array(volumes)) = spec.get_mut("volumes") {
        for v in volumes.iter_mut().filter_map(Value::as_object_mut) {
            default_volume(v);
        }
    }
}

/// Fills the defaults of the pod template at `pointer` (`/spec/template`).
pub fn default_pod_template(obj: &mut Value, pointer: &str) {
    if obj.pointer(pointer).is_some_and(Value::is_object) {
        default_pod_spec(obj, &format!("{pointer}/spec"));
    }
}

/// `Always` for an image tagged `latest` or not tagged (and not pinned by digest), else
/// `IfNotPresent`.
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, tag)) if tag != "latest" => "IfNotPresent",
        _ => "Always",
    }
}

fn default_container(c: &mut Map<String, Value>, host_network: bool) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let policy = pull_policy(image);
    default_key(c, "imagePullPolicy", policy.into());
    default_key(c, "terminationMessagePath", "/dev/termination-log".into());
    default_key(c, "terminationMessagePolicy", "File".into());
    default_key(c, "resources", json!({}));
    if let Some(Value::Array(ports)) = c.get_mut("ports") {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            default_key(p, "protocol", "TCP".into());
            if host_network && let Some(port) = p.get("containerPort").cloned() {
                default_key(p, "hostPort", port);
            }
        }
    }
    default_requests_from_limits(c);
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(p)) = c.get_mut(probe) {
            default_key(p, "timeoutSeconds", 1.into());
            default_key(p, "periodSeconds", 10.into());
            default_key(p, "successThreshold", 1.into());
            default_key(p, "failureThreshold", 3.into());
            if let Some(Value::Object(get)) = p.get_mut("httpGet") {
                default_key(get, "path", "/".into());
                default_key(get, "scheme", "HTTP".into());
            }
        }
    }
}

/// A resource with a limit and no request gets the limit as its request.
fn default_requests_from_limits(c: &mut Map<String, Value>) {
    let Some(Value::Object(resources)) = c.get_mut("resources") else {
        return;
    };
    let Some(Value::Object(limits)) = resources.get("limits").cloned() else {
        return;
    };
    let Value::Object(requests) = resources
        .entry("requests")
        .or_insert_with(|| Value::Object(Map::new()))
    else {
        return;
    };
    for (k, v) in limits {
        requests.entry(k).or_insert(v);
    }
}

fn default_volume(v: &mut Map<String, Value>) {
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(Value::Object(s)) = v.get_mut(source) {
            default_key(s, "defaultMode", DEFAULT_MODE.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_spec_defaults_are_upstreams() {
        let mut pod = json!({"spec": {
            "containers": [
                {"name": "a", "image": "nginx", "ports": [{"containerPort": 80}],
                 "resources": {"limits": {"cpu": "1"}}},
                {"name": "b", "image": "reg:5000/nginx:1.25"},
                {"name": "c", "image": "nginx:latest"},
                {"name": "d", "image": "nginx@sha256:abc"}
            ],
            "volumes": [{"name": "s", "secret": {"secretName": "x"}}]
        }});
        default_pod_spec(&mut pod, "/spec");
        let s = &pod["spec"];
        assert_eq!(s["dnsPolicy"], "ClusterFirst");
        assert_eq!(s["restartPolicy"], "Always");
        assert_eq!(s["terminationGracePeriodSeconds"], 30);
        assert_eq!(s["securityContext"], json!({}));
        assert_eq!(s["schedulerName"], "default-scheduler");
        assert_eq!(s["enableServiceLinks"], true);
        let c = &s["containers"];
        assert_eq!(c[0]["imagePullPolicy"], "Always");
        assert_eq!(c[1]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c[2]["imagePullPolicy"], "Always");
        assert_eq!(c[3]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c[0]["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(c[0]["terminationMessagePolicy"], "File");
        assert_eq!(c[0]["ports"][0]["protocol"], "TCP");
        assert_eq!(c[0]["resources"]["requests"]["cpu"], "1");
        assert_eq!(c[1]["resources"], json!({}));
        assert_eq!(s["volumes"][0]["secret"]["defaultMode"], 420);
    }

    #[test]
    fn set_values_win_and_host_network_copies_ports() {
        let mut pod = json!({"spec": {
            "restartPolicy": "Never", "hostNetwork": true,
            "containers": [{"name": "a", "image": "x", "imagePullPolicy": "Never",
                            "ports": [{"containerPort": 53, "protocol": "UDP"}],
                            "readinessProbe": {"httpGet": {"port": 80}}}]
        }});
        default_pod_spec(&mut pod, "/spec");
        let c = &pod["spec"]["containers"][0];
        assert_eq!(pod["spec"]["restartPolicy"], "Never");
        assert_eq!(c["imagePullPolicy"], "Never");
        assert_eq!(
            c["ports"][0],
            json!({"containerPort": 53, "protocol": "UDP", "hostPort": 53})
        );
        assert_eq!(c["readinessProbe"]["periodSeconds"], 10);
        assert_eq!(c["readinessProbe"]["httpGet"]["scheme"], "HTTP");
    }
}
