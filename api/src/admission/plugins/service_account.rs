//! `ServiceAccount`: a new pod runs as a ServiceAccount of its namespace (`default` when it
//! names none), which must exist; unless the pod or (pod unset) the account turns
//! `automountServiceAccountToken` off, the pod gets the projected `kube-api-access-<suffix>`
//! volume (a bound token, the cluster's CA bundle, its namespace) mounted read-only in every
//! container at [`TOKEN_MOUNT_PATH`], and the account's image pull secrets when it has none.
//! An account annotated `<domain>/enforce-mountable-secrets: "true"` limits the secrets its
//! pods reference (secret volumes, environment variables and `envFrom` of every container,
//! image pull secrets) to those it lists, on creates and on updates of `ephemeralcontainers`.
//! Mirror pods (created by a node agent) are left as they are and may reference neither
//! service accounts nor secrets (Kubernetes' plugin of that name).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::objects::ObjectCache;
use super::pods;
use super::pods::is_pod;
use crate::RandomSource;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::generated_name;
use crate::storage::Storage;

/// The account of a pod that names none.
const DEFAULT_ACCOUNT: &str = "default";

/// Where the token volume is mounted in every container.
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The token volume's name before its random suffix (`kube-api-access-`).
const VOLUME_PREFIX: &str = "kube-api-access-";

/// The ConfigMap of every namespace holding the cluster's CA bundle (key `ca.crt`).
const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";

/// The projected token's lifetime: Kubernetes' `WarnOnlyBoundTokenExpirationSeconds`, one
/// hour and seven seconds, by which the token server recognises tokens of this volume.
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;

/// The projected volume's file mode (0644).
const DEFAULT_MODE: i64 = 420;

/// How many live reads look for the `default` account before the pod is refused: the
/// account is created by a controller and may be moments behind its namespace.
const DEFAULT_ACCOUNT_ATTEMPTS: usize = 10;

/// Sets and checks the ServiceAccount of new pods and mounts its token.
pub struct ServiceAccount {
    accounts: ObjectCache,
    random: RandomSource,
    /// `<domain>/config.mirror`.
    mirror: String,
    /// `<domain>/enforce-mountable-secrets`.
    enforce_mountable: String,
}

impl ServiceAccount {
    /// The plugin reading `storage`'s ServiceAccounts; `random` names the token volumes.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor, random: RandomSource) -> Self {
        Self {
            accounts: ObjectCache::new(storage, "core", "serviceaccounts"),
            random,
            mirror: format!("{}/config.mirror", flavor.label_domain()),
            enforce_mountable: format!("{}/enforce-mountable-secrets", flavor.label_domain()),
        }
    }

    /// The account `name` of the write's namespace: from memory, else read live, for
    /// `default` up to [`DEFAULT_ACCOUNT_ATTEMPTS`] times 100–200 ms apart; Kubernetes' 403
    /// when it is not found.
    async fn account(
        &self,
        attributes: &Attributes<'_>,
        name: &str,
    ) -> Result<Arc<Value>, ApiError> {
        let namespace = attributes.namespace;
        let attempts = if name == DEFAULT_ACCOUNT {
            DEFAULT_ACCOUNT_ATTEMPTS
        } else {
            1
        };
        let interval = Duration::from_millis(100 + self.random.index(100) as u64);
        for attempt in 0..attempts {
            if attempt != 0 {
                tokio::time::sleep(interval).await;
            }
            match self.accounts.get(namespace, name).await {
                Ok(Some(account)) => return Ok(account),
                Ok(None) => {}
                Err(error) => {
                    return Err(attributes.forbidden(format!(
                        "error looking up service account {namespace}/{name}: {error}"
                    )));
                }
            }
        }
        Err(attributes.forbidden(format!(
            "error looking up service account {namespace}/{name}: serviceaccount \"{name}\" not found"
        )))
    }

    /// The 403 of `pod` referencing a secret `account` does not list, when the account
    /// limits its pods to the secrets it lists; `ephemeral`: only the ephemeral containers
    /// are looked at (an update of `ephemeralcontainers`).
    fn limit_secrets(
        &self,
        attributes: &Attributes<'_>,
        account: &Value,
        pod: &Value,
        ephemeral: bool,
    ) -> Result<(), ApiError> {
        let annotation = (account.pointer("/metadata/annotations"))
            .and_then(|a| a.get(&self.enforce_mountable))
            .and_then(Value::as_str);
        if !matches!(annotation, Some("1" | "t" | "T" | "true" | "TRUE" | "True")) {
            return Ok(());
        }
        match unlisted_secret(account, pod, ephemeral) {
            Some(reason) => Err(attributes.forbidden(reason)),
            None => Ok(()),
        }
    }

    /// Whether `pod` is a mirror pod.
    fn is_mirror(&self, pod: &Value) -> bool {
        pod.pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .is_some_and(|a| a.contains_key(&self.mirror))
    }
}

/// Whether the plugin judges the write: a pod's create.
fn judged(attributes: &Attributes<'_>) -> bool {
    attributes.operation == Operation::Create && is_pod(attributes)
}

/// Whether the write is an update of a pod's ephemeral containers.
fn ephemeral_update(attributes: &Attributes<'_>) -> bool {
    attributes.operation == Operation::Update
        && attributes.resource.group.is_empty()
        && attributes.resource.plural == "pods"
        && attributes.subresource == "ephemeralcontainers"
}

/// Why `pod` may not reference its secrets as `account`: the first secret it references
/// that the account does not list, in Kubernetes' order and words (`ephemeral`: only the
/// ephemeral containers' environment is looked at).
fn unlisted_secret(account: &Value, pod: &Value, ephemeral: bool) -> Option<String> {
    let name = text(account, "/metadata/name");
    let listed = |pointer: &str, secret: &str| {
        list(account, pointer)
            .iter()
            .any(|s| text(s, "/name") == secret)
    };
    let refused = |what: String, secret: &str| {
        format!(
            "{what} referencing secret.secretName=\"{secret}\" is not allowed because service account {name} does not reference that secret"
        )
    };
    let groups: &[(&str, &str)] = match ephemeral {
        true => &[("/spec/ephemeralContainers", "ephemeral container")],
        false => &[
            ("/spec/initContainers", "init container"),
            ("/spec/containers", "container"),
        ],
    };
    if !ephemeral {
        for volume in list(pod, "/spec/volumes") {
            let Some(secret) = volume.pointer("/secret/secretName").and_then(Value::as_str) else {
                continue;
            };
            if !listed("/secrets", secret) {
                return Some(format!(
                    "volume with secret.secretName=\"{secret}\" is not allowed because service account {name} does not reference that secret"
                ));
            }
        }
    }
    for (pointer, kind) in groups {
        for container in list(pod, pointer) {
            let container_name = text(container, "/name");
            for env in list(container, "/env") {
                let secret = text(env, "/valueFrom/secretKeyRef/name");
                if env.pointer("/valueFrom/secretKeyRef").is_some() && !listed("/secrets", secret) {
                    let what =
                        format!("{kind} {container_name} with envVar {}", text(env, "/name"));
                    return Some(refused(what, secret));
                }
            }
            for source in list(container, "/envFrom") {
                let secret = text(source, "/secretRef/name");
                if source.get("secretRef").is_some() && !listed("/secrets", secret) {
                    let what = format!("{kind} {container_name} with envFrom");
                    return Some(refused(what, secret));
                }
            }
        }
    }
    if ephemeral {
        return None;
    }
    (list(pod, "/spec/imagePullSecrets").iter().enumerate())
        .map(|(i, s)| (i, text(s, "/name")))
        .find(|(_, secret)| !listed("/imagePullSecrets", secret))
        .map(|(i, secret)| {
            format!(
                "imagePullSecrets[{i}].name=\"{secret}\" is not allowed because service account {name} does not reference that imagePullSecret"
            )
        })
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(value: &'a Value, pointer: &str) -> &'a [Value] {
    (value.pointer(pointer).and_then(Value::as_array)).map_or(&[], Vec::as_slice)
}

/// The account `pod` names: `serviceAccountName`, else the deprecated `serviceAccount` (as
/// Kubernetes reads a v1 pod), `None` when it names none.
fn named_account(pod: &Value) -> Option<&str> {
    ["/spec/serviceAccountName", "/spec/serviceAccount"]
        .iter()
        .map(|p| text(pod, p))
        .find(|n| !n.is_empty())
}

/// Why a mirror pod is refused: it names an account, references a secret or projects a
/// service account token.
fn mirror_refusal(pod: &Value) -> Option<&'static str> {
    if named_account(pod).is_some() {
        return Some("a mirror pod may not reference service accounts");
    }
    if pods::references_secrets(pod) {
        return Some("a mirror pod may not reference secrets");
    }
    let projects_token = list(pod, "/spec/volumes").iter().any(|volume| {
        list(volume, "/projected/sources")
            .iter()
            .any(|source| source.get("serviceAccountToken").is_some())
    });
    projects_token.then_some("a mirror pod may not use ServiceAccountToken volume projections")
}

/// Whether the token is mounted: the pod's `automountServiceAccountToken` when set, else
/// the account's, else yes.
fn automounts(account: &Value, pod: &Value) -> bool {
    (pod.pointer("/spec/automountServiceAccountToken")
        .and_then(Value::as_bool))
    .or_else(|| {
        account
            .get("automountServiceAccountToken")
            .and_then(Value::as_bool)
    })
    .unwrap_or(true)
}

/// The token volume's source, shaped as Kubernetes' `TokenVolumeSource`.
fn token_volume_source() -> Value {
    json!({
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": DEFAULT_MODE,
    })
}

/// Mounts the token volume in every init container and container not already mounting
/// something at [`TOKEN_MOUNT_PATH`]; adds the volume (named by `name` unless the pod already
/// has a `kube-api-access-` volume) when a container mounts it.
fn mount_token(spec: &mut Map<String, Value>, name: impl FnOnce() -> String) {
    let existing = (spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|v| v.get("name").and_then(Value::as_str))
    .find(|n| n.starts_with(VOLUME_PREFIX))
    .map(str::to_owned);
    let has_volume = existing.is_some();
    let volume = existing.unwrap_or_else(name);
    let mount = json!({"name": volume, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut needed = false;
    for field in ["initContainers", "containers"] {
        let containers = spec.get_mut(field).and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            let Some(container) = container.as_object_mut() else {
                continue;
            };
            let mounts = container.entry("volumeMounts").or_insert_with(|| json!([]));
            let Some(mounts) = mounts.as_array_mut() else {
                continue;
            };
            if !(mounts.iter()).any(|m| text(m, "/mountPath") == TOKEN_MOUNT_PATH) {
                mounts.push(mount.clone());
                needed = true;
            }
        }
    }
    if needed && !has_volume {
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if let Some(volumes) = volumes.as_array_mut() {
            volumes.push(json!({"name": volume, "projected": token_volume_source()}));
        }
    }
}

#[async_trait::async_trait]
impl Plugin for ServiceAccount {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(pod) = object.filter(|_| judged(attributes)) else {
            return Ok(());
        };
        if self.is_mirror(pod) {
            return mirror_refusal(pod).map_or(Ok(()), |r| Err(attributes.forbidden(r)));
        }
        let name = named_account(pod).unwrap_or(DEFAULT_ACCOUNT).to_owned();
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        spec.insert("serviceAccountName".into(), json!(name));
        spec.insert("serviceAccount".into(), json!(name));
        let account = self.account(attributes, &name).await?;
        self.limit_secrets(attributes, &account, pod, false)?;
        if automounts(&account, pod) {
            let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
                return Ok(());
            };
            mount_token(spec, || generated_name(VOLUME_PREFIX, &self.random));
        }
        let pull_secrets: Vec<Value> = list(&account, "/imagePullSecrets")
            .iter()
            .map(|s| json!({"name": text(s, "/name")}))
            .collect();
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut)
            && list_is_empty(spec.get("imagePullSecrets"))
            && !pull_secrets.is_empty()
        {
            spec.insert("imagePullSecrets".into(), Value::Array(pull_secrets));
        }
        Ok(())
    }

    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let ephemeral = ephemeral_update(attributes);
        let Some(pod) = object.filter(|_| judged(attributes) || ephemeral) else {
            return Ok(());
        };
        if !ephemeral && self.is_mirror(pod) {
            return mirror_refusal(pod).map_or(Ok(()), |r| Err(attributes.forbidden(r)));
        }
        let Some(name) = named_account(pod) else {
            return Err(attributes.forbidden(format!(
                "no service account specified for pod {}/{}",
                attributes.namespace,
                text(pod, "/metadata/name")
            )));
        };
        let account = self.account(attributes, name).await?;
        self.limit_secrets(attributes, &account, pod, ephemeral)
    }
}

fn list_is_empty(value: Option<&Value>) -> bool {
    value.and_then(Value::as_array).is_none_or(Vec::is_empty)
}

#[cfg(test)]
#[path = "service_account_tests.rs"]
mod tests;
