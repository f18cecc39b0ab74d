//! Path and method -> [`RequestInfo`], as Kubernetes' `RequestInfoFactory` computes it
//! (spec 000 "Endpoints", R-RES-074..081; verbs as in 001, R-ACC-098..106).
//!
//! This is a pure function of the method, the path and the query: no registry lookup happens
//! here, so an unknown resource still yields a resource request (answered 404 later).

use http::Method;

use super::QueryParams;
use super::query::decode;

/// The API verb of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb {
    /// GET on an item.
    Get,
    /// GET on a collection.
    List,
    /// GET with `watch` on a collection or an item (or the legacy `/watch/` prefix).
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE on an item.
    Delete,
    /// DELETE on a collection.
    DeleteCollection,
    /// The `/proxy/` special verb.
    Proxy,
    /// A non-resource request's lower-case HTTP method, or an unknown method (empty).
    Other(String),
}

impl Verb {
    /// The verb authorization knows as `name` (the inverse of [`Verb::as_str`]): an access
    /// review's or a CEL check's verb as a request would carry it.
    pub fn named(name: &str) -> Self {
        match name {
            "get" => Self::Get,
            "list" => Self::List,
            "watch" => Self::Watch,
            "create" => Self::Create,
            "update" => Self::Update,
            "patch" => Self::Patch,
            "delete" => Self::Delete,
            "deletecollection" => Self::DeleteCollection,
            "proxy" => Self::Proxy,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The verb as authorization sees it (`get`, `list`, `deletecollection`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Get => "get",
            Self::List => "list",
            Self::Watch => "watch",
            Self::Create => "create",
            Self::Update => "update",
            Self::Patch => "patch",
            Self::Delete => "delete",
            Self::DeleteCollection => "deletecollection",
            Self::Proxy => "proxy",
            Self::Other(s) => s,
        }
    }
}

/// Where a request points and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestInfo {
    /// Whether the path is under `/api/<version>/...` or `/apis/<group>/<version>/...` with a
    /// resource; discovery documents and `/healthz` are non-resource requests.
    pub is_resource_request: bool,
    /// The request path as sent.
    pub path: String,
    /// The verb.
    pub verb: Verb,
    /// `api` or `apis` (empty for non-resource requests).
    pub api_prefix: String,
    /// The API group (empty: core).
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The namespace (for `/api/v1/namespaces/<name>` it is `<name>`, as in Kubernetes).
    pub namespace: String,
    /// The plural resource name.
    pub resource: String,
    /// The subresource (`status`, `log`, ...), if any.
    pub subresource: String,
    /// The object's name (empty for collections).
    pub name: String,
    /// The path segments from the resource on (`[resource, name, subresource, ...]`).
    pub parts: Vec<String>,
    /// The request's `fieldSelector` as sent (empty: none). Authorizers see it on every
    /// request, as the served release passes selectors (`AuthorizeWithSelectors`, R-ACC-172).
    pub field_selector: String,
    /// The request's `labelSelector` as sent (empty: none).
    pub label_selector: String,
}

/// Namespace subresources that are not resources of their own in `/namespaces/<ns>/<x>`.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

impl RequestInfo {
    /// A request that names no resource: `verb` on `path`.
    pub fn non_resource(path: &str, verb: Verb) -> Self {
        Self {
            is_resource_request: false,
            path: path.to_owned(),
            verb,
            api_prefix: String::new(),
            api_group: String::new(),
            api_version: String::new(),
            namespace: String::new(),
            resource: String::new(),
            subresource: String::new(),
            name: String::new(),
            parts: Vec::new(),
            field_selector: String::new(),
            label_selector: String::new(),
        }
    }

    /// Computes the request info of `method` on `path` with `query`.
    pub fn parse(method: &Method, path: &str, query: &QueryParams) -> Self {
        let parts: Vec<String> = path
            .trim_matches('/')
            .split('/')
            .map(|s| decode(s, false))
            .collect();
        let mut info = Self::non_resource(path, Verb::Other(method.as_str().to_ascii_lowercase()));
        let mut rest: &[String] = &parts;
        let needed = match rest.first().map(String::as_str) {
            Some("api") => 3,
            Some("apis") => 4,
            _ => return info,
        };
        if rest.len() < needed {
            return info;
        }
        // From here `rest` keeps at least one segment: `needed` leaves one after the prefix,
        // group and version, and every later step only drops segments when more follow.
        let prefix = rest[0].clone();
        rest = &rest[1..];
        if prefix == "apis" {
            info.api_group = rest[0].clone();
            rest = &rest[1..];
        }
        info.api_prefix = prefix;
        info.is_resource_request = true;
        info.field_selector = query.get("fieldSelector").unwrap_or_default().to_owned();
        info.label_selector = query.get("labelSelector").unwrap_or_default().to_owned();
        info.api_version = rest[0].clone();
        rest = &rest[1..];

        let special = match rest[0].as_str() {
            "watch" if rest.len() >= 2 => Some(Verb::Watch),
            "proxy" if rest.len() >= 2 => Some(Verb::Proxy),
            _ => None,
        };
        let via_special = special.is_some();
        info.verb = match special {
            Some(v) => {
                rest = &rest[1..];
                v
            }
            None => match *method {
                Method::POST => Verb::Create,
                Method::GET | Method::HEAD => Verb::Get,
                Method::PUT => Verb::Update,
                Method::PATCH => Verb::Patch,
                Method::DELETE => Verb::Delete,
                _ => Verb::Other(String::new()),
            },
        };

        if rest[0] == "namespaces" && rest.len() > 1 {
            info.namespace = rest[1].clone();
            if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2].as_str()) {
                rest = &rest[2..];
            }
        }
        info.parts = rest.to_vec();
        if info.parts.len() >= 3 && info.verb != Verb::Proxy {
            info.subresource = info.parts[2].clone();
        }
        if info.parts.len() >= 2 {
            info.name = info.parts[1].clone();
        }
        info.resource = info.parts[0].clone();

        if info.name.is_empty() && info.verb == Verb::Get {
            info.verb = if query.flag("watch") {
                Verb::Watch
            } else {
                Verb::List
            };
            if let Some(name) = exact_name(query.get("fieldSelector")) {
                info.name = name;
            }
        } else if info.name.is_empty()
            && via_special
            && info.verb == Verb::Watch
            && let Some(name) = exact_name(query.get("fieldSelector"))
        {
            info.name = name;
        } else if !info.name.is_empty()
            && info.subresource.is_empty()
            && info.verb == Verb::Get
            && query.flag("watch")
        {
            // An item path with `watch` watches that one object (spec 000 "watch": collection
            // or item), and is authorized as the watch it is.
            info.verb = Verb::Watch;
        }
        if info.name.is_empty() && info.verb == Verb::Delete {
            info.verb = Verb::DeleteCollection;
        }
        info
    }

    /// Whether the request addresses a namespace-scoped path (`.../namespaces/<ns>/<res>`);
    /// false for the namespace objects themselves (`/api/v1/namespaces/<name>`), whose
    /// namespace is their own name.
    pub fn is_namespaced_path(&self) -> bool {
        let own_namespace = self.resource == "namespaces" && self.name == self.namespace;
        !self.namespace.is_empty() && !own_namespace
    }
}

/// The name a field selector pins with `metadata.name=<n>` (or `==`), if it does and the name
/// is a valid path segment (Kubernetes narrows list/watch authorization to it).
fn exact_name(selector: Option<&str>) -> Option<String> {
    selector?.split(',').find_map(|req| {
        let value = req
            .strip_prefix("metadata.name==")
            .or_else(|| req.strip_prefix("metadata.name="))?;
        let valid = !value.is_empty()
            && value != "."
            && value != ".."
            && !value.contains('/')
            && !value.contains('%');
        valid.then(|| value.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: Method, path_and_query: &str) -> RequestInfo {
        let (path, query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path_and_query, None),
        };
        RequestInfo::parse(&method, path, &QueryParams::parse(query))
    }

    /// (method, path, verb, group, version, namespace, resource, subresource, name)
    type Row = (
        Method,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );

    // R-RES-074, R-RES-075, R-RES-076, R-RES-077, R-RES-078, R-RES-079, R-RES-080,
    // R-ACC-099, R-ACC-100, R-ACC-101, R-ACC-102, R-ACC-103, R-ACC-104, R-ACC-105, R-ACC-106
    #[test]
    fn resource_paths() {
        let rows: Vec<Row> = vec![
            (
                Method::GET,
                "/api/v1/namespaces",
                "list",
                "",
                "v1",
                "",
                "namespaces",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/other",
                "get",
                "",
                "v1",
                "other",
                "namespaces",
                "",
                "other",
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/other/status",
                "update",
                "",
                "v1",
                "other",
                "namespaces",
                "status",
                "other",
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/other/finalize",
                "update",
                "",
                "v1",
                "other",
                "namespaces",
                "finalize",
                "other",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/other",
                "delete",
                "",
                "v1",
                "other",
                "namespaces",
                "",
                "other",
            ),
            (
                Method::GET,
                "/api/v1/configmaps",
                "list",
                "",
                "v1",
                "",
                "configmaps",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/configmaps?watch=true",
                "watch",
                "",
                "v1",
                "",
                "configmaps",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps",
                "list",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps?watch=1",
                "watch",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps/x?watch=1",
                "watch",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps/x/status?watch=1",
                "get",
                "",
                "v1",
                "default",
                "configmaps",
                "status",
                "x",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps?watch=false",
                "list",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "",
            ),
            (
                Method::HEAD,
                "/api/v1/namespaces/default/configmaps/x",
                "get",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps/x",
                "get",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                "create",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "",
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/default/configmaps/x",
                "update",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::PATCH,
                "/api/v1/namespaces/default/configmaps/x",
                "patch",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/default/configmaps/x",
                "delete",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/default/configmaps",
                "deletecollection",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/pods/p/log",
                "get",
                "",
                "v1",
                "default",
                "pods",
                "log",
                "p",
            ),
            (
                Method::GET,
                "/api/v1/nodes",
                "list",
                "",
                "v1",
                "",
                "nodes",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/nodes/n1",
                "get",
                "",
                "v1",
                "",
                "nodes",
                "",
                "n1",
            ),
            (
                Method::GET,
                "/apis/apps/v1/deployments",
                "list",
                "apps",
                "v1",
                "",
                "deployments",
                "",
                "",
            ),
            (
                Method::GET,
                "/apis/apps/v1/namespaces/ns/deployments/d/scale",
                "get",
                "apps",
                "v1",
                "ns",
                "deployments",
                "scale",
                "d",
            ),
            (
                Method::POST,
                "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                "create",
                "rbac.authorization.k8s.io",
                "v1",
                "",
                "clusterroles",
                "",
                "",
            ),
            (
                Method::DELETE,
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/r",
                "delete",
                "rbac.authorization.k8s.io",
                "v1",
                "",
                "clusterroles",
                "",
                "r",
            ),
            (
                Method::GET,
                "/api/v1/watch/namespaces/default/configmaps",
                "watch",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "",
            ),
            (
                Method::GET,
                "/api/v1/watch/namespaces/default/configmaps/x",
                "watch",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/pods/p/proxy/a/b",
                "get",
                "",
                "v1",
                "default",
                "pods",
                "proxy",
                "p",
            ),
            (
                Method::GET,
                "/api/v1/proxy/namespaces/default/pods/p/a/b",
                "proxy",
                "",
                "v1",
                "default",
                "pods",
                "",
                "p",
            ),
            (
                Method::OPTIONS,
                "/api/v1/namespaces/default/configmaps/x",
                "",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dx",
                "list",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3D%3Dx",
                "watch",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "x",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Da%2Fb",
                "list",
                "",
                "v1",
                "default",
                "configmaps",
                "",
                "",
            ),
        ];
        for (method, path, verb, group, version, ns, resource, sub, name) in rows {
            let i = info(method.clone(), path);
            let got = (
                i.is_resource_request,
                i.verb.as_str(),
                i.api_group.as_str(),
                i.api_version.as_str(),
                i.namespace.as_str(),
                i.resource.as_str(),
                i.subresource.as_str(),
                i.name.as_str(),
            );
            assert_eq!(
                got,
                (true, verb, group, version, ns, resource, sub, name),
                "{method} {path}"
            );
        }
    }

    // R-ACC-098
    #[test]
    fn non_resource_paths_use_the_lower_case_method() {
        for (method, path) in [
            (Method::GET, "/"),
            (Method::GET, "/api"),
            (Method::GET, "/api/v1"),
            (Method::GET, "/apis"),
            (Method::GET, "/apis/apps"),
            (Method::GET, "/apis/apps/v1"),
            (Method::GET, "/healthz"),
            (Method::POST, "/version"),
            (Method::GET, "/openapi/v2"),
        ] {
            let i = info(method.clone(), path);
            assert!(!i.is_resource_request, "{path}");
            assert_eq!(
                i.verb.as_str(),
                method.as_str().to_ascii_lowercase(),
                "{path}"
            );
        }
    }

    #[test]
    fn odd_paths_never_panic() {
        let segments = [
            "",
            "api",
            "apis",
            "v1",
            "g",
            "namespaces",
            "watch",
            "proxy",
            "x",
            "status",
            "%",
            "%zz",
            ".",
        ];
        for a in segments {
            for b in segments {
                for c in segments {
                    for d in ["", "/", "/x", "/namespaces/", "/watch"] {
                        let path = format!("/{a}/{b}/{c}{d}");
                        for m in [Method::GET, Method::DELETE, Method::POST] {
                            let _ = info(m, &path);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn namespaced_path_detection_and_oddities() {
        assert!(info(Method::GET, "/api/v1/namespaces/a/configmaps").is_namespaced_path());
        assert!(!info(Method::GET, "/api/v1/namespaces/a").is_namespaced_path());
        assert!(!info(Method::GET, "/api/v1/configmaps").is_namespaced_path());
        assert!(!info(Method::PUT, "/api/v1/namespaces/a/status").is_namespaced_path());
        assert!(info(Method::GET, "/api/v1/namespaces/a/namespaces/b").is_namespaced_path());
        let odd = info(Method::GET, "/api/v1/watch");
        assert_eq!(
            (odd.verb.as_str(), odd.resource.as_str()),
            ("list", "watch")
        );
        let trailing = info(Method::GET, "/api/v1/namespaces/default/configmaps/");
        assert_eq!(trailing.verb, Verb::List);
        let escaped = info(Method::GET, "/api/v1/namespaces/default/configmaps/a%2Db");
        assert_eq!(escaped.name, "a-b");
        let empty_segments = info(Method::GET, "/api/v1//x");
        assert_eq!(empty_segments.resource, "");
    }
}
