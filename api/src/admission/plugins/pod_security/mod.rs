//! `PodSecurity`: the Pod Security Standards, as kube-apiserver's pod-security-admission
//! applies them. A namespace's `pod-security.<domain>/enforce|audit|warn[-version]` labels
//! (over the configured defaults) choose the levels: pods that violate the enforced level are
//! refused, violations of the audited level are recorded in the audit event, and violations
//! of the warned level are answered as warnings. The templates of pod controllers are only
//! warned about and audited; a namespace's labels are validated, and tightening its enforced
//! level warns about the pods already there (namespace.rs).
//!
//! - policy.rs: levels, versions and a namespace's policy; config.rs: the configuration.
//! - checks.rs: the evaluation; baseline.rs and restricted.rs: the checks.

mod baseline;
mod checks;
mod config;
mod namespace;
mod policy;
mod restricted;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::Value;

use self::checks::evaluate;
pub use self::config::PodSecurityConfig;
use self::policy::Policy;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::StoredJson;
use crate::registry::builtin::namespace_type;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// The PodSecurity admission plugin.
pub struct PodSecurity {
    storage: Arc<dyn Storage>,
    flavor: Flavor,
    config: PodSecurityConfig,
    /// `pod-security.<domain>/`: the labels' and audit annotations' prefix.
    prefix: String,
}

/// Where a resource keeps its pod template, for the pod controllers Kubernetes checks.
fn template_of<'a>(group: &str, plural: &str, object: &'a Value) -> Option<&'a Value> {
    let path = match (group, plural) {
        ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets")
        | ("batch", "jobs")
        | ("", "replicationcontrollers") => "/spec/template",
        ("batch", "cronjobs") => "/spec/jobTemplate/spec/template",
        ("", "podtemplates") => "/template",
        _ => return None,
    };
    object.pointer(path)
}

/// Whether a pod update changes what the standards look at (Kubernetes' rule: images,
/// containers added or removed, seccomp annotations); other updates are not checked.
fn significant_update(new: &Value, old: &Value) -> bool {
    let annotation = |pod: &Value, key: &str| -> Option<String> {
        pod.pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let seccomp_pod = "seccomp.security.alpha.kubernetes.io/pod";
    if annotation(new, seccomp_pod) != annotation(old, seccomp_pod) {
        return true;
    }
    let list = |pod: &'_ Value, key: &str| -> Vec<Value> {
        pod["spec"][key].as_array().cloned().unwrap_or_default()
    };
    let container_changed = |c: &Value, o: &Value| {
        let key = format!(
            "container.seccomp.security.alpha.kubernetes.io/{}",
            checks::name(c)
        );
        c["image"] != o["image"] || annotation(new, &key) != annotation(old, &key)
    };
    for key in ["containers", "initContainers"] {
        let (now, before) = (list(new, key), list(old, key));
        if now.len() != before.len()
            || now
                .iter()
                .zip(&before)
                .any(|(c, o)| container_changed(c, o))
        {
            return true;
        }
    }
    let before = list(old, "ephemeralContainers");
    list(new, "ephemeralContainers").iter().any(|c| {
        match before.iter().find(|o| o["name"] == c["name"]) {
            Some(o) => container_changed(c, o),
            None => true,
        }
    })
}

impl PodSecurity {
    /// The plugin, reading namespaces from `storage`, configured by `config`.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor, config: PodSecurityConfig) -> Self {
        Self {
            storage,
            flavor,
            config,
            prefix: format!("pod-security.{}/", flavor.label_domain()),
        }
    }

    fn annotate(&self, key: &str, value: &str) {
        crate::audit::annotate(&format!("{}{key}", self.prefix), value);
    }

    /// The policy of `namespace`, from its labels as this replica has it (the plugin's
    /// informer cache in Kubernetes).
    async fn namespace_policy(&self, namespace: &str) -> Result<Policy, ApiError> {
        let key = namespace_type().object_key("", namespace);
        let lookup = |e: String| {
            ApiError::Internal(format!("failed to lookup namespace {namespace:?}: {e}"))
        };
        let found = self
            .storage
            .get(&key, ReadConsistency::Any)
            .await
            .map_err(|e| lookup(e.to_string()))?;
        let Some(found) = found else {
            return Ok(self.config.defaults);
        };
        let ns = StoredJson::from_stored(found.value)
            .and_then(|s| s.to_value())
            .map_err(|e| lookup(e.to_string()))?;
        let labels = ns.pointer("/metadata/labels").and_then(Value::as_object);
        Ok(Policy::from_labels(labels, &self.prefix, &self.config.defaults).0)
    }

    /// The exemption that applies, if any (`namespace`, `user` or `runtimeClass`).
    fn exemption(&self, attributes: &Attributes<'_>, spec: &Value) -> Option<&'static str> {
        let config = &self.config;
        if config
            .exempt_namespaces
            .iter()
            .any(|n| n == attributes.namespace)
        {
            return Some("namespace");
        }
        if config.exempt_users.contains(&attributes.user.name) {
            return Some("user");
        }
        let runtime_class = spec["runtimeClassName"].as_str().unwrap_or_default();
        if !runtime_class.is_empty()
            && config
                .exempt_runtime_classes
                .iter()
                .any(|r| r == runtime_class)
        {
            return Some("runtimeClass");
        }
        None
    }

    /// Judges the pod (`metadata`, `spec`): refuses it when `enforce` and the enforced level
    /// is violated; audits and warns otherwise.
    async fn judge(
        &self,
        attributes: &Attributes<'_>,
        metadata: &Value,
        spec: &Value,
        enforce: bool,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if let Some(exempt) = self.exemption(attributes, spec) {
            self.annotate("exempt", exempt);
            return Ok(());
        }
        let policy = self.namespace_policy(attributes.namespace).await?;
        if enforce {
            self.annotate("enforce-policy", &policy.enforce.to_string());
            let violations = evaluate(policy.enforce, metadata, spec);
            if !violations.is_empty() {
                return Err(attributes.forbidden(format!(
                    "violates PodSecurity \"{}\": {}",
                    policy.enforce,
                    checks::describe(&violations)
                )));
            }
        }
        let audited = evaluate(policy.audit, metadata, spec);
        if !audited.is_empty() {
            self.annotate(
                "audit-violations",
                &format!(
                    "would violate PodSecurity \"{}\": {}",
                    policy.audit,
                    checks::describe(&audited)
                ),
            );
        }
        let warned = evaluate(policy.warn, metadata, spec);
        if !warned.is_empty() {
            notes.warnings.push(format!(
                "would violate PodSecurity \"{}\": {}",
                policy.warn,
                checks::describe(&warned)
            ));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Plugin for PodSecurity {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let (Some(object), Operation::Create | Operation::Update) = (object, attributes.operation)
        else {
            return Ok(());
        };
        let resource = attributes.resource;
        match (resource.group.as_str(), resource.plural.as_str()) {
            ("", "namespaces") if attributes.subresource.is_empty() => {
                self.validate_namespace(attributes, object, old, notes)
                    .await
            }
            ("", "pods") if matches!(attributes.subresource, "" | "ephemeralcontainers") => {
                if let Some(old) = old
                    && !significant_update(object, old)
                {
                    return Ok(());
                }
                let metadata = &object["metadata"];
                self.judge(attributes, metadata, &object["spec"], true, notes)
                    .await
            }
            (group, plural) if attributes.subresource.is_empty() => {
                let Some(template) = template_of(group, plural, object) else {
                    return Ok(());
                };
                if let (Some(old), Operation::Update) = (old, attributes.operation)
                    && template_of(group, plural, old) == Some(template)
                {
                    return Ok(());
                }
                let (metadata, spec) = (&template["metadata"], &template["spec"]);
                self.judge(attributes, metadata, spec, false, notes).await
            }
            _ => Ok(()),
        }
    }
}
