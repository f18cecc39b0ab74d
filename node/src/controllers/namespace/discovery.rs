//! The namespace controller's discovery: every served namespaced resource type, found through
//! the API's own discovery documents (`/api`, `/apis`, each group version) as client-go's
//! `ServerPreferredNamespacedResources` finds them (each group's resources in its preferred
//! version, or the first version serving them), so custom resources are included once served.

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::client::ControllerError;
use super::super::client::InProcessClient;

/// Most group versions one discovery walks (the budget of an input-driven loop).
const MAX_GROUP_VERSIONS: usize = 1_000;

/// One namespaced resource type the server serves.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Resource {
    /// The API group (`""` for the core group).
    pub group: String,
    /// The version.
    pub version: String,
    /// The plural resource name.
    pub resource: String,
    /// The verbs discovery lists for it.
    pub verbs: Vec<String>,
}

impl Resource {
    /// Whether discovery lists `verb` for this type.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// The path of this type's collection in `namespace`.
    pub fn collection(&self, namespace: &str) -> String {
        let root = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        format!("{root}/namespaces/{namespace}/{}", self.resource)
    }
}

/// What a discovery found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The deletable namespaced resource types, sorted.
    pub resources: Vec<Resource>,
    /// The group versions whose documents could not be read, with why (client-go's
    /// `ErrGroupDiscoveryFailed`).
    pub failed: BTreeMap<String, String>,
    /// The group versions that do not parse, with why.
    pub unparsable: Vec<String>,
}

impl Discovered {
    /// The message of the `NamespaceDeletionDiscoveryFailure` condition, when discovery failed.
    pub fn discovery_failure(&self) -> Option<String> {
        if self.failed.is_empty() {
            return None;
        }
        let groups: Vec<String> = self
            .failed
            .iter()
            .map(|(gv, why)| format!("{gv}: {why}"))
            .collect();
        Some(format!(
            "Discovery failed for some groups, {} failing: unable to retrieve the complete list of server APIs: {}",
            self.failed.len(),
            groups.join(", ")
        ))
    }
}

/// A group and its versions, preferred first, as `/api` and `/apis` list them.
struct Group {
    name: String,
    versions: Vec<String>,
    preferred: Option<String>,
}

/// Discovers the deletable namespaced resource types. The root documents must be readable;
/// a group version that is not is recorded in [`Discovered::failed`] and the rest is used.
pub async fn discover(client: &InProcessClient) -> Result<Discovered, ControllerError> {
    let mut groups = Vec::new();
    if let Some(core) = client.get("/api").await? {
        let versions: Vec<String> = strings(&core["versions"]);
        groups.push(Group {
            name: String::new(),
            preferred: versions.first().cloned(),
            versions,
        });
    }
    if let Some(list) = client.get("/apis").await? {
        for group in list["groups"].as_array().into_iter().flatten() {
            let versions = group["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v["groupVersion"].as_str().map(str::to_owned))
                .collect();
            groups.push(Group {
                name: group["name"].as_str().unwrap_or_default().to_owned(),
                versions,
                preferred: group["preferredVersion"]["groupVersion"]
                    .as_str()
                    .map(str::to_owned),
            });
        }
    }
    let mut discovered = Discovered::default();
    // Per group resource, its version: the preferred one if it serves it, else the first.
    let mut chosen: BTreeMap<(String, String), Resource> = BTreeMap::new();
    let mut walked = 0;
    for group in &groups {
        for group_version in &group.versions {
            walked += 1;
            if walked > MAX_GROUP_VERSIONS {
                break;
            }
            let Some((name, version)) = parse_group_version(group_version) else {
                discovered
                    .unparsable
                    .push(format!("unexpected GroupVersion string: {group_version}"));
                continue;
            };
            let path = if name.is_empty() {
                format!("/api/{version}")
            } else {
                format!("/apis/{name}/{version}")
            };
            let list = match client.get(&path).await {
                Ok(Some(list)) => list,
                Ok(None) => {
                    discovered.failed.insert(
                        group_version.clone(),
                        "the server could not find the requested resource".to_owned(),
                    );
                    continue;
                }
                Err(error) => {
                    discovered
                        .failed
                        .insert(group_version.clone(), status_message(&error));
                    continue;
                }
            };
            let preferred = group.preferred.as_deref() == Some(group_version.as_str());
            for entry in list["resources"].as_array().into_iter().flatten() {
                let resource = entry["name"].as_str().unwrap_or_default();
                if resource.is_empty()
                    || resource.contains('/')
                    || entry["namespaced"].as_bool() != Some(true)
                {
                    continue;
                }
                let key = (group.name.clone(), resource.to_owned());
                if chosen.contains_key(&key) && !preferred {
                    continue;
                }
                chosen.insert(
                    key,
                    Resource {
                        group: name.to_owned(),
                        version: version.to_owned(),
                        resource: resource.to_owned(),
                        verbs: strings(&entry["verbs"]),
                    },
                );
            }
        }
    }
    discovered.resources = chosen
        .into_values()
        .filter(|r| r.supports("delete"))
        .collect();
    discovered.resources.sort();
    Ok(discovered)
}

/// The message of a failed request, as a Kubernetes client reports its `Status`.
pub fn status_message(error: &ControllerError) -> String {
    match error {
        ControllerError::Status { message, .. } if !message.is_empty() => message.clone(),
        other => other.to_string(),
    }
}

/// `group/version` or `version` as `ParseGroupVersion` splits it; `None` when malformed.
fn parse_group_version(text: &str) -> Option<(&str, &str)> {
    match text.split_once('/') {
        None if !text.is_empty() => Some(("", text)),
        Some((group, version)) if !version.contains('/') && !version.is_empty() => {
            Some((group, version))
        }
        _ => None,
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_versions_parse_as_kubernetes_parses_them() {
        assert_eq!(parse_group_version("v1"), Some(("", "v1")));
        assert_eq!(parse_group_version("apps/v1"), Some(("apps", "v1")));
        assert_eq!(parse_group_version("a/b/c"), None);
        assert_eq!(parse_group_version(""), None);
    }

    #[test]
    fn collection_paths_follow_the_group() {
        let mut r = Resource {
            group: String::new(),
            version: "v1".into(),
            resource: "pods".into(),
            verbs: vec!["delete".into()],
        };
        assert_eq!(r.collection("a"), "/api/v1/namespaces/a/pods");
        r.group = "apps".into();
        r.resource = "deployments".into();
        assert_eq!(r.collection("a"), "/apis/apps/v1/namespaces/a/deployments");
        assert!(r.supports("delete") && !r.supports("deletecollection"));
    }

    #[test]
    fn failures_are_worded_as_client_go_words_them() {
        let mut d = Discovered::default();
        assert_eq!(d.discovery_failure(), None);
        d.failed.insert("b/v1".into(), "boom".into());
        d.failed.insert("a/v1".into(), "down".into());
        assert_eq!(
            d.discovery_failure().unwrap(),
            "Discovery failed for some groups, 2 failing: unable to retrieve the complete list of server APIs: a/v1: down, b/v1: boom"
        );
    }
}
