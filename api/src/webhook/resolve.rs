//! A webhook's address: a `url` as given, or a `service` resolved through its
//! EndpointSlices to one ready endpoint (kube-apiserver's endpoint routing; there is no
//! kube-proxy to route a cluster IP). Read from the replica's own state, as kube-apiserver
//! reads its informers.

use serde_json::Value;

use super::CallError;
use super::ClientConfig;
use super::Endpoint;
use super::Target;
use crate::flavor::Flavor;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// Where Services are stored (keys are the same in every flavor).
const SERVICES: &str = "/registry/core/services/";
/// Where EndpointSlices are stored.
const ENDPOINT_SLICES: &str = "/registry/discovery.k8s.io/endpointslices/";
/// The most EndpointSlices of one namespace read to find a Service's.
const MAX_SLICES: usize = 1000;

/// The address `config` names.
pub async fn resolve(
    config: &ClientConfig,
    storage: &dyn Storage,
    flavor: Flavor,
) -> Result<Endpoint, CallError> {
    match &config.target {
        Target::Url(url) => Ok(Endpoint {
            server_name: host_of(url).to_owned(),
            url: url.clone(),
            ca_bundle: config.ca_bundle.clone(),
        }),
        Target::Service {
            namespace,
            name,
            path,
            port,
        } => {
            let address = service_address(storage, flavor, namespace, name, *port).await?;
            Ok(Endpoint {
                url: format!("https://{address}{path}"),
                server_name: format!("{name}.{namespace}.svc"),
                ca_bundle: config.ca_bundle.clone(),
            })
        }
    }
}

/// The host of an `https://` URL, without its port or IPv6 brackets.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    }
}

fn unresolved(message: String) -> CallError {
    CallError::Unresolved(message)
}

async fn read(storage: &dyn Storage, key: &str) -> Result<Option<Value>, CallError> {
    let found = storage
        .get(key, ReadConsistency::Any)
        .await
        .map_err(|e| unresolved(e.to_string()))?;
    found
        .map(|o| {
            crate::registry::StoredJson::from_stored(o.value)
                .and_then(|s| s.to_value())
                .map_err(|e| unresolved(e.to_string()))
        })
        .transpose()
}

/// `host:port` of a ready endpoint of Service `namespace/name` for its port `port`.
async fn service_address(
    storage: &dyn Storage,
    flavor: Flavor,
    namespace: &str,
    name: &str,
    port: i64,
) -> Result<String, CallError> {
    let service = read(storage, &format!("{SERVICES}{namespace}/{name}"))
        .await?
        .ok_or_else(|| unresolved(format!("service \"{name}\" not found")))?;
    let ports = service.pointer("/spec/ports").and_then(Value::as_array);
    let service_port = (ports.into_iter().flatten())
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
        .ok_or_else(|| unresolved(format!("unable to find service port {port}")))?;
    let port_name = service_port
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let slices = storage
        .list(
            &format!("{ENDPOINT_SLICES}{namespace}/"),
            None,
            MAX_SLICES,
            ReadConsistency::Any,
        )
        .await
        .map_err(|e| unresolved(e.to_string()))?;
    let owner_label = format!("{}/service-name", flavor.label_domain());
    for object in slices.items {
        let Ok(slice) =
            crate::registry::StoredJson::from_stored(object.value).and_then(|s| s.to_value())
        else {
            continue;
        };
        if slice
            .pointer("/metadata/labels")
            .and_then(|l| l.get(&owner_label))
            != Some(&Value::from(name))
        {
            continue;
        }
        if let Some(address) = ready_address(&slice, port_name) {
            return Ok(address);
        }
    }
    Err(unresolved(format!(
        "no endpoints available for service \"{name}\""
    )))
}

/// The first ready endpoint of `slice` with its port named `port_name`, as `host:port`.
fn ready_address(slice: &Value, port_name: &str) -> Option<String> {
    let port = (slice
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)?
    .get("port")
    .and_then(Value::as_i64)?;
    let ipv6 = slice.get("addressType").and_then(Value::as_str) == Some("IPv6");
    (slice
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter(|e| e.pointer("/conditions/ready").and_then(Value::as_bool) != Some(false))
    .find_map(|e| e.pointer("/addresses/0").and_then(Value::as_str))
    .map(|address| match ipv6 {
        true => format!("[{address}]:{port}"),
        false => format!("{address}:{port}"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::builtin::rows;

    #[test]
    fn the_keys_read_are_where_services_and_endpoint_slices_are_stored() {
        let prefixes: Vec<String> = (rows().iter())
            .map(|r| r.resource_type(Flavor::Kubernetes).key_prefix())
            .collect();
        assert!(prefixes.contains(&SERVICES.to_owned()));
        assert!(prefixes.contains(&ENDPOINT_SLICES.to_owned()));
    }

    #[test]
    fn a_url_is_verified_as_its_host() {
        assert_eq!(
            host_of("https://hook.example.com:8443/convert?x=1"),
            "hook.example.com"
        );
        assert_eq!(host_of("https://127.0.0.1/"), "127.0.0.1");
        assert_eq!(host_of("https://[::1]:9443/c"), "::1");
        assert_eq!(host_of("https://user@h"), "h");
    }

    #[test]
    fn a_slice_answers_its_first_ready_endpoint_on_the_named_port() {
        let slice = json!({
            "addressType": "IPv4",
            "ports": [{"name": "other", "port": 1}, {"name": "https", "port": 9443}],
            "endpoints": [
                {"addresses": ["10.0.0.1"], "conditions": {"ready": false}},
                {"addresses": ["10.0.0.2"]},
            ],
        });
        assert_eq!(
            ready_address(&slice, "https").as_deref(),
            Some("10.0.0.2:9443")
        );
        assert_eq!(ready_address(&slice, "missing"), None);
        let v6 = json!({"addressType": "IPv6", "ports": [{"port": 443}],
            "endpoints": [{"addresses": ["::1"]}]});
        assert_eq!(ready_address(&v6, "").as_deref(), Some("[::1]:443"));
    }
}
