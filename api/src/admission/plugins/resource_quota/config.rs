//! The plugin's configuration from `--admission-control-config-file`: Kubernetes'
//! `ResourceQuotaConfiguration` (`apiserver.config.k8s.io/v1`, or `Configuration` of
//! `resourcequota.admission.k8s.io/v1beta1` / `v1alpha1`) and its `limitedResources`: the
//! resources that may be consumed only in a namespace with a quota covering them.

use serde_json::Value;

use super::scopes::ScopeSelector;

/// The most limited resources read.
const MAX_LIMITED: usize = 256;
/// The most `matchContains` entries read per limited resource.
const MAX_CONTAINS: usize = 256;

/// One `limitedResources` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitedResource {
    /// The API group (empty: core).
    pub api_group: String,
    /// The resource's plural.
    pub resource: String,
    /// Substrings of quota resource names: a usage of a name containing one needs a quota.
    pub match_contains: Vec<String>,
    /// Scopes an object matching one needs a quota with that scope.
    pub match_scopes: Vec<ScopeSelector>,
}

/// The ResourceQuota plugin's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuotaConfig {
    /// The resources limited by default.
    pub limited: Vec<LimitedResource>,
}

/// The accepted (apiVersion, kind) pairs.
const KINDS: [(&str, &str); 3] = [
    ("apiserver.config.k8s.io/v1", "ResourceQuotaConfiguration"),
    ("resourcequota.admission.k8s.io/v1beta1", "Configuration"),
    ("resourcequota.admission.k8s.io/v1alpha1", "Configuration"),
];

impl QuotaConfig {
    /// The configuration in `doc`, or why it is not one.
    pub fn parse(doc: &Value) -> Result<Self, String> {
        let api_version = doc["apiVersion"].as_str().unwrap_or_default();
        let kind = doc["kind"].as_str().unwrap_or_default();
        if !KINDS.contains(&(api_version, kind)) {
            return Err(format!(
                "no kind {kind:?} is registered for version {api_version:?} in the ResourceQuota \
                 configuration (expected apiserver.config.k8s.io/v1 ResourceQuotaConfiguration)"
            ));
        }
        let entries = match &doc["limitedResources"] {
            Value::Null => &Vec::new(),
            Value::Array(entries) => entries,
            _ => return Err("limitedResources: must be a list".to_owned()),
        };
        let mut limited = Vec::new();
        for (i, entry) in entries.iter().take(MAX_LIMITED).enumerate() {
            let text = |field: &str| entry[field].as_str().unwrap_or_default().to_owned();
            let resource = text("resource");
            if resource.is_empty() {
                return Err(format!("limitedResources[{i}].resource: Required value"));
            }
            limited.push(LimitedResource {
                api_group: text("apiGroup"),
                resource,
                match_contains: (entry["matchContains"].as_array().into_iter().flatten())
                    .take(MAX_CONTAINS)
                    .filter_map(|c| c.as_str().map(str::to_owned))
                    .collect(),
                match_scopes: ScopeSelector::list(entry.get("matchScopes")),
            });
        }
        Ok(Self { limited })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn limited_resources_are_read_with_their_scopes() {
        let doc = json!({"apiVersion": "apiserver.config.k8s.io/v1",
            "kind": "ResourceQuotaConfiguration",
            "limitedResources": [{"resource": "pods", "matchContains": ["cpu"],
                "matchScopes": [{"scopeName": "PriorityClass", "operator": "In",
                                 "values": ["cluster-services"]}]}]});
        let config = QuotaConfig::parse(&doc).expect("valid");
        assert_eq!(config.limited.len(), 1);
        assert_eq!(config.limited[0].resource, "pods");
        assert_eq!(config.limited[0].match_contains, ["cpu"]);
        assert_eq!(
            config.limited[0].match_scopes[0].values,
            ["cluster-services"]
        );
    }

    #[test]
    fn a_limited_resource_needs_its_resource_and_the_kind_must_be_known() {
        let doc = json!({"apiVersion": "apiserver.config.k8s.io/v1",
            "kind": "ResourceQuotaConfiguration", "limitedResources": [{"apiGroup": ""}]});
        assert_eq!(
            QuotaConfig::parse(&doc),
            Err("limitedResources[0].resource: Required value".to_owned())
        );
        let other = json!({"apiVersion": "v1", "kind": "ResourceQuotaConfiguration"});
        assert!(QuotaConfig::parse(&other).is_err());
        let beta = json!({"apiVersion": "resourcequota.admission.k8s.io/v1beta1",
                          "kind": "Configuration"});
        assert_eq!(QuotaConfig::parse(&beta), Ok(QuotaConfig::default()));
    }
}
