//! The admin kubeconfig of `apiary certs` and `apiary dev`: one cluster and one context per
//! replica (current: the first), all using the admin client certificate, with the CA and the
//! admin certificate and key embedded so the file works from any directory.
//!
//! It is written as JSON, which every kubeconfig reader accepts (YAML is a superset of JSON).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use serde_json::json;

use super::pki::PemPair;

/// The user entry every context uses.
const ADMIN_USER_ENTRY: &str = "admin";

/// The kubeconfig document for replicas `servers` (`(name, API URL)`, in order) whose serving
/// certificates `ca` signed, as the user of the client certificate `admin`.
pub fn kubeconfig(ca: &PemPair, admin: &PemPair, servers: &[(String, String)]) -> Value {
    let ca = STANDARD.encode(&ca.cert_pem);
    let clusters: Vec<Value> = servers
        .iter()
        .map(|(name, url)| {
            json!({
                "name": name,
                "cluster": {
                    "server": url,
                    "certificate-authority-data": ca,
                },
            })
        })
        .collect();
    let contexts: Vec<Value> = servers
        .iter()
        .map(|(name, _)| {
            json!({
                "name": name,
                "context": { "cluster": name, "user": ADMIN_USER_ENTRY },
            })
        })
        .collect();
    let current = servers.first().map(|(name, _)| name.as_str()).unwrap_or("");
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": clusters,
        "contexts": contexts,
        "current-context": current,
        "users": [{
            "name": ADMIN_USER_ENTRY,
            "user": {
                "client-certificate-data": STANDARD.encode(&admin.cert_pem),
                "client-key-data": STANDARD.encode(&admin.key_pem),
            },
        }],
        "preferences": {},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dev::DevPki;
    use crate::dev::node_name;

    #[test]
    fn one_cluster_and_context_per_replica_with_embedded_credentials() {
        let dir = tempfile::tempdir().unwrap();
        let pki = DevPki::load_or_generate(dir.path(), 3).unwrap();
        let servers: Vec<(String, String)> = (0..3)
            .map(|i| (node_name(i), format!("https://127.0.0.1:{}", 6443 + i)))
            .collect();
        let config = kubeconfig(&pki.ca, &pki.admin, &servers);

        assert_eq!(config["current-context"], "node-1");
        let clusters = config["clusters"].as_array().unwrap();
        let contexts = config["contexts"].as_array().unwrap();
        assert_eq!(clusters.len(), 3);
        assert_eq!(contexts.len(), 3);
        assert_eq!(clusters[1]["name"], "node-2");
        assert_eq!(clusters[1]["cluster"]["server"], "https://127.0.0.1:6444");
        assert_eq!(contexts[2]["context"]["cluster"], "node-3");
        assert_eq!(contexts[2]["context"]["user"], "admin");

        let decode = |v: &Value| String::from_utf8(STANDARD.decode(v.as_str().unwrap()).unwrap());
        assert_eq!(
            decode(&clusters[0]["cluster"]["certificate-authority-data"]).unwrap(),
            pki.ca.cert_pem
        );
        let user = &config["users"][0]["user"];
        assert_eq!(
            decode(&user["client-certificate-data"]).unwrap(),
            pki.admin.cert_pem
        );
        assert_eq!(decode(&user["client-key-data"]).unwrap(), pki.admin.key_pem);
    }
}
