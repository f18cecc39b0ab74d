//! The kubeconfig of a dev cluster: one cluster and one context per replica (`node-1` ...
//! `node-N`, current `node-1`), all using the admin client certificate, with the CA and the
//! admin certificate and key embedded so the file works from any directory.
//!
//! It is written as JSON, which every kubeconfig reader accepts (YAML is a superset of JSON).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use serde_json::json;

use super::pki::DevPki;
use super::pki::node_name;

/// The user entry every context uses.
const ADMIN_USER_ENTRY: &str = "admin";

/// The kubeconfig document for `pki`'s cluster, replica `i` (0-based) served at
/// `api_urls[i]`.
pub fn kubeconfig(pki: &DevPki, api_urls: &[String]) -> Value {
    let ca = STANDARD.encode(&pki.ca.cert_pem);
    let clusters: Vec<Value> = api_urls
        .iter()
        .enumerate()
        .map(|(i, url)| {
            json!({
                "name": node_name(i),
                "cluster": {
                    "server": url,
                    "certificate-authority-data": ca,
                },
            })
        })
        .collect();
    let contexts: Vec<Value> = (0..api_urls.len())
        .map(|i| {
            json!({
                "name": node_name(i),
                "context": { "cluster": node_name(i), "user": ADMIN_USER_ENTRY },
            })
        })
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": clusters,
        "contexts": contexts,
        "current-context": node_name(0),
        "users": [{
            "name": ADMIN_USER_ENTRY,
            "user": {
                "client-certificate-data": STANDARD.encode(&pki.admin.cert_pem),
                "client-key-data": STANDARD.encode(&pki.admin.key_pem),
            },
        }],
        "preferences": {},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cluster_and_context_per_replica_with_embedded_credentials() {
        let dir = tempfile::tempdir().unwrap();
        let pki = DevPki::load_or_generate(dir.path(), 3).unwrap();
        let urls: Vec<String> = (0..3)
            .map(|i| format!("https://127.0.0.1:{}", 6443 + i))
            .collect();
        let config = kubeconfig(&pki, &urls);

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
