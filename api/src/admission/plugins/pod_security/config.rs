//! PodSecurity's configuration (`PodSecurityConfiguration`, the `PodSecurity` entry of the
//! admission configuration file): the policy of namespaces without labels, and the users,
//! runtime classes and namespaces exempt from it.

use serde_json::Value;

use super::policy::LEVEL_ERROR;
use super::policy::Level;
use super::policy::MODES;
use super::policy::Policy;
use super::policy::VERSION_ERROR;
use super::policy::Version;

/// The API versions of `PodSecurityConfiguration`.
const API_VERSIONS: [&str; 3] = [
    "pod-security.admission.config.k8s.io/v1",
    "pod-security.admission.config.k8s.io/v1beta1",
    "pod-security.admission.config.k8s.io/v1alpha1",
];

/// PodSecurity's configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodSecurityConfig {
    /// The policy of namespaces, for the modes their labels do not set.
    pub defaults: Policy,
    /// Requests by these users are not checked.
    pub exempt_users: Vec<String>,
    /// Pods of these runtime classes are not checked.
    pub exempt_runtime_classes: Vec<String>,
    /// Pods of these namespaces are not checked.
    pub exempt_namespaces: Vec<String>,
}

impl PodSecurityConfig {
    /// The configuration `doc` gives, or what is wrong with it.
    pub fn parse(doc: &Value) -> Result<Self, String> {
        let api_version = doc["apiVersion"].as_str().unwrap_or_default();
        if !API_VERSIONS.contains(&api_version) {
            return Err(format!(
                "apiVersion {api_version:?}: must be one of {}",
                API_VERSIONS.join(", ")
            ));
        }
        if doc["kind"] != "PodSecurityConfiguration" {
            return Err(format!(
                "kind {}: must be PodSecurityConfiguration",
                doc["kind"]
            ));
        }
        let mut config = Self::default();
        let defaults = &doc["defaults"];
        for mode in MODES {
            let target = match mode {
                "enforce" => &mut config.defaults.enforce,
                "audit" => &mut config.defaults.audit,
                _ => &mut config.defaults.warn,
            };
            if let Some(level) = non_empty(&defaults[mode]) {
                target.level = Level::parse(level).ok_or_else(|| {
                    format!("defaults.{mode}: Invalid value: {level:?}: {LEVEL_ERROR}")
                })?;
            }
            let version_key = format!("{mode}-version");
            if let Some(version) = non_empty(&defaults[&version_key]) {
                target.version = Version::parse(version).ok_or_else(|| {
                    format!("defaults.{version_key}: Invalid value: {version:?}: {VERSION_ERROR}")
                })?;
            }
        }
        let exemptions = &doc["exemptions"];
        let list = |key: &str| -> Result<Vec<String>, String> {
            match &exemptions[key] {
                Value::Null => Ok(Vec::new()),
                Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| match non_empty(item) {
                        Some(s) => Ok(s.to_owned()),
                        None => Err(format!("exemptions.{key}[{i}]: Invalid value: {item}: must be a non-empty string")),
                    })
                    .collect(),
                other => Err(format!("exemptions.{key}: Invalid value: {other}: must be a list")),
            }
        };
        config.exempt_users = list("usernames")?;
        config.exempt_runtime_classes = list("runtimeClasses")?;
        config.exempt_namespaces = list("namespaces")?;
        Ok(config)
    }
}

fn non_empty(value: &Value) -> Option<&str> {
    value.as_str().filter(|s| !s.is_empty())
}
