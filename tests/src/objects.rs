//! JSON bodies and paths the tests and the benchmark send: ConfigMaps in a namespace.

use serde_json::Value;
use serde_json::json;

/// The namespace every harness object lives in.
pub const NAMESPACE: &str = "default";

/// The collection path of ConfigMaps in [`NAMESPACE`].
pub fn configmaps_path() -> String {
    format!("/api/v1/namespaces/{NAMESPACE}/configmaps")
}

/// The item path of ConfigMap `name` in [`NAMESPACE`].
pub fn configmap_path(name: &str) -> String {
    format!("{}/{name}", configmaps_path())
}

/// A ConfigMap named `name` whose `data` holds `pairs`.
pub fn configmap(name: &str, pairs: &[(&str, &str)]) -> Value {
    let data: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": name, "namespace": NAMESPACE },
        "data": data,
    })
}

/// `object`'s `metadata.resourceVersion`, if it has one.
pub fn resource_version(object: &Value) -> Option<&str> {
    object["metadata"]["resourceVersion"].as_str()
}

/// A string of exactly `len` bytes, used as a payload of known size.
pub fn payload(len: usize) -> String {
    "abcdefghijklmnopqrstuvwxyz0123456789"
        .chars()
        .cycle()
        .take(len)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configmap_has_the_kubernetes_shape() {
        let cm = configmap("a", &[("k", "v")]);
        assert_eq!(cm["kind"], "ConfigMap");
        assert_eq!(cm["metadata"]["name"], "a");
        assert_eq!(cm["data"]["k"], "v");
        assert_eq!(resource_version(&cm), None);
        assert_eq!(
            configmap_path("a"),
            "/api/v1/namespaces/default/configmaps/a"
        );
        assert_eq!(payload(1024).len(), 1024);
    }
}
