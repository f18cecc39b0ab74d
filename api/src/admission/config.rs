//! `--admission-control-config-file`: Kubernetes' AdmissionConfiguration
//! (`apiserver.config.k8s.io/v1` or `v1alpha1`), each plugin's configuration given inline or
//! by a path, read once at start.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use serde_json::Value;

/// The API versions of the AdmissionConfiguration kind.
const API_VERSIONS: [&str; 2] = [
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1alpha1",
];

/// Why the admission configuration file cannot be used (the server refuses to start).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionConfigError {
    /// The file, or a plugin's `path`, cannot be read.
    #[error("unable to read admission control configuration from {path:?}: {reason}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// The file, or a plugin's configuration, is not a valid document.
    #[error("invalid admission control configuration in {path:?}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The admission configuration: each plugin's configuration document, by plugin name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdmissionConfig {
    plugins: BTreeMap<String, Value>,
}

impl AdmissionConfig {
    /// Reads the AdmissionConfiguration at `path` (YAML or JSON); plugins' relative `path`s
    /// are relative to the file's directory, as Kubernetes resolves them. Every plugin's
    /// configuration is read now and checked by the plugin that uses it.
    pub fn read(path: &Path) -> Result<Self, AdmissionConfigError> {
        let text = read_text(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse(&text, base).map_err(|reason| AdmissionConfigError::Invalid {
            path: path.to_owned(),
            reason,
        })
    }

    fn parse(text: &str, base: &Path) -> Result<Self, String> {
        let doc: Value = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        let api_version = doc["apiVersion"].as_str().unwrap_or_default();
        if !API_VERSIONS.contains(&api_version) {
            return Err(format!(
                "apiVersion {api_version:?}: must be one of {}",
                API_VERSIONS.join(", ")
            ));
        }
        if doc["kind"] != "AdmissionConfiguration" {
            return Err(format!(
                "kind {}: must be AdmissionConfiguration",
                doc["kind"]
            ));
        }
        let entries = match &doc["plugins"] {
            Value::Null => &Vec::new(),
            Value::Array(entries) => entries,
            _ => return Err("plugins: must be a list".to_owned()),
        };
        let mut plugins = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let Some(name) = entry["name"].as_str().filter(|n| !n.is_empty()) else {
                return Err(format!("plugins[{i}].name: Required value"));
            };
            if plugins.contains_key(name) {
                continue; // Kubernetes uses a plugin's first entry.
            }
            let configuration = match entry["path"].as_str().filter(|p| !p.is_empty()) {
                Some(path) => {
                    let path = base.join(path);
                    let text = read_text(&path).map_err(|e| e.to_string())?;
                    serde_saphyr::from_str(&text)
                        .map_err(|e| format!("plugins[{i}].path {path:?}: {e}"))?
                }
                None => entry["configuration"].clone(),
            };
            super::plugins::check_configuration(name, &configuration)
                .map_err(|e| format!("plugins[{i}] ({name}): {e}"))?;
            plugins.insert(name.to_owned(), configuration);
        }
        Ok(Self { plugins })
    }

    /// The configuration document given for the plugin `name`, if any.
    pub fn plugin(&self, name: &str) -> Option<&Value> {
        self.plugins.get(name).filter(|v| !v.is_null())
    }
}

fn read_text(path: &Path) -> Result<String, AdmissionConfigError> {
    std::fs::read_to_string(path).map_err(|e| AdmissionConfigError::Unreadable {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
