//! The garbage collector's view of the served resource types, read through the API's own
//! discovery (`/api`, `/apis` and each group version's resource list), as
//! kube-controller-manager's collector reads it: every version of every group maps an
//! owner reference's `apiVersion` and `kind` to a resource; the preferred version of each
//! group is the one listed, so an object is seen once. Events are never collected, as in
//! Kubernetes (its default ignored resources).

use serde_json::Value;

use super::super::client::ControllerError;
use super::super::client::InProcessClient;

/// Group versions read per pass at most (a budget: discovery is input-driven).
const MAX_GROUP_VERSIONS: usize = 256;

/// One served resource type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The API group (empty: core).
    pub group: String,
    /// The version.
    pub version: String,
    /// The plural name in paths.
    pub plural: String,
    /// The kind of one object.
    pub kind: String,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
    /// Whether the collector lists it: the group's preferred version, with `list` and
    /// `delete`, not an event kind.
    pub collected: bool,
}

impl Resource {
    /// `apiVersion` of its objects.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The path of its collection in `namespace` (every namespace when empty or cluster
    /// scoped).
    pub fn collection(&self, namespace: &str) -> String {
        let prefix = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        if self.namespaced && !namespace.is_empty() {
            format!("{prefix}/namespaces/{namespace}/{}", self.plural)
        } else {
            format!("{prefix}/{}", self.plural)
        }
    }

    /// The path of the object `name` in `namespace`.
    pub fn object(&self, namespace: &str, name: &str) -> String {
        format!("{}/{name}", self.collection(namespace))
    }
}

/// Every served resource type.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    all: Vec<Resource>,
}

impl Resources {
    /// The resource of objects of `kind` in `api_version`, if served.
    pub fn of_kind(&self, api_version: &str, kind: &str) -> Option<&Resource> {
        self.all
            .iter()
            .find(|r| r.kind == kind && r.api_version() == api_version)
    }

    /// The resource types the collector lists.
    pub fn collected(&self) -> impl Iterator<Item = &Resource> {
        self.all.iter().filter(|r| r.collected)
    }
}

/// The served resource types, as discovery documents them.
pub async fn discover(client: &InProcessClient) -> Result<Resources, ControllerError> {
    let mut versions: Vec<(String, String, bool)> = Vec::new();
    if let Some(core) = client.get("/api").await? {
        for version in strings(&core["versions"]) {
            versions.push((String::new(), version, true));
        }
    }
    if let Some(groups) = client.get("/apis").await? {
        for group in groups["groups"].as_array().into_iter().flatten() {
            let name = group["name"].as_str().unwrap_or_default();
            let preferred = group["preferredVersion"]["version"].as_str();
            for version in group["versions"].as_array().into_iter().flatten() {
                let Some(version) = version["version"].as_str() else {
                    continue;
                };
                let is_preferred = preferred == Some(version);
                versions.push((name.to_owned(), version.to_owned(), is_preferred));
            }
        }
    }
    let mut all = Vec::new();
    for (group, version, preferred) in versions.into_iter().take(MAX_GROUP_VERSIONS) {
        let path = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let Some(list) = client.get(&path).await? else {
            continue;
        };
        for resource in list["resources"].as_array().into_iter().flatten() {
            let plural = resource["name"].as_str().unwrap_or_default();
            if plural.is_empty() || plural.contains('/') {
                continue;
            }
            let verbs = strings(&resource["verbs"]);
            let has = |verb: &str| verbs.iter().any(|v| v == verb);
            let kind = resource["kind"].as_str().unwrap_or_default();
            all.push(Resource {
                group: group.clone(),
                version: version.clone(),
                plural: plural.to_owned(),
                kind: kind.to_owned(),
                namespaced: resource["namespaced"].as_bool().unwrap_or(false),
                collected: preferred && has("list") && has("delete") && kind != "Event",
            });
        }
    }
    Ok(Resources { all })
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}
