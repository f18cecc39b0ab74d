//! The operations of the documents, one [`PathItem`] per path, built from the served rows the
//! way Kubernetes' installer names them: list/create/deletecollection on the collection,
//! read/replace/patch/delete on the item, list across namespaces, the served subresources,
//! and the discovery documents of each group and group version. Rendering into v2 or v3
//! shapes is left to `v2.rs` and `v3.rs`.

use serde_json::Value;
use serde_json::json;

use super::components::KindNames;
use super::components::VERSION_INFO;
use super::components::meta;
use super::params;
use super::params::Param;
use super::served::Served;
use super::served::capitalized;
use crate::registry::subresource_verbs;

/// The media types a PATCH body may have (PATCH itself is served by the resource handlers).
pub const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// The media types of a body other than a patch (any the server decodes).
const ANY_BODY: &[&str] = &["*/*"];

/// What the server answers with.
const JSON: &[&str] = &["application/json"];

/// What a list answers with (a watch streams events).
const JSON_AND_WATCH: &[&str] = &["application/json", "application/json;stream=watch"];

/// One path and its operations.
#[derive(Debug, Clone)]
pub struct PathItem {
    /// The path (`/api/v1/namespaces/{namespace}/configmaps/{name}`).
    pub path: String,
    /// The parameters of every operation on it (path parameters, `pretty`).
    pub params: Vec<Param>,
    /// The operations.
    pub ops: Vec<Operation>,
}

/// A request body.
#[derive(Debug, Clone)]
pub struct Body {
    /// The definition name of its schema.
    pub schema: String,
    /// The media types it may have.
    pub consumes: &'static [&'static str],
}

/// One operation.
#[derive(Debug, Clone)]
pub struct Operation {
    /// The HTTP method, lower case as OpenAPI keys it.
    pub method: &'static str,
    /// `listCoreV1NamespacedConfigMap`.
    pub id: String,
    /// What it does.
    pub description: String,
    /// The tag (`core_v1`).
    pub tag: String,
    /// `x-kubernetes-action` (none for the discovery documents).
    pub action: Option<&'static str>,
    /// `x-kubernetes-group-version-kind` (none for the discovery documents).
    pub gvk: Option<Value>,
    /// The operation's own query parameters.
    pub params: &'static [Param],
    /// The request body, if any.
    pub body: Option<Body>,
    /// Status codes and the definition names of their bodies.
    pub responses: Vec<(u16, String)>,
    /// The media types of the answer.
    pub produces: &'static [&'static str],
}

/// The path of a group version: `/api/v1` or `/apis/<group>/<version>`.
fn base(s: &Served) -> String {
    format!("/{}", s.group_version_key())
}

/// The paths of one served row.
pub fn resource_paths(s: &Served, names: &KindNames) -> Vec<PathItem> {
    let r = &s.resource;
    let (scope_path, scope_params, ns) = if r.is_namespaced() {
        (
            "/namespaces/{namespace}",
            vec![params::NAMESPACE],
            "Namespaced",
        )
    } else {
        ("", Vec::new(), "")
    };
    let collection = format!("{}{scope_path}/{}", base(s), r.plural);
    let item = format!("{collection}/{{name}}");
    let prefix = s.operation_prefix();
    let kind = &r.kind;
    let op = |method, verb: &str, action, description: String, params| Operation {
        method,
        id: format!("{verb}{prefix}{ns}{kind}"),
        description,
        tag: s.tag(),
        action: Some(action),
        gvk: Some(json!({"group": r.group, "kind": kind, "version": r.version})),
        params,
        body: None,
        responses: Vec::new(),
        produces: JSON,
    };
    let with_body = |mut o: Operation, schema: &str, consumes| {
        o.body = Some(Body {
            schema: schema.to_owned(),
            consumes,
        });
        o
    };
    let answers = |mut o: Operation, codes: &[u16], schema: &str| {
        o.responses = codes.iter().map(|c| (*c, schema.to_owned())).collect();
        o
    };
    let status = meta("Status");
    let delete_options = meta("DeleteOptions");

    let mut on_collection = Vec::new();
    if r.supports("list") {
        let mut list = op(
            "get",
            "list",
            "list",
            format!("list or watch objects of kind {kind}"),
            params::LIST,
        );
        list.produces = JSON_AND_WATCH;
        on_collection.push(answers(list, &[200], &names.list));
    }
    if r.supports("create") {
        let create = op(
            "post",
            "create",
            "post",
            format!("create a {kind}"),
            params::WRITE,
        );
        let create = with_body(create, &names.kind, ANY_BODY);
        on_collection.push(answers(create, &[200, 201, 202], &names.kind));
    }
    if r.supports("deletecollection") {
        let mut delete = op(
            "delete",
            "delete",
            "deletecollection",
            format!("delete collection of {kind}"),
            params::DELETE_COLLECTION,
        );
        delete.id = format!("delete{prefix}Collection{ns}{kind}");
        let delete = with_body(delete, &delete_options, ANY_BODY);
        on_collection.push(answers(delete, &[200], &status));
    }

    let mut on_item = Vec::new();
    if r.supports("get") {
        let read = op(
            "get",
            "read",
            "get",
            format!("read the specified {kind}"),
            &[],
        );
        on_item.push(answers(read, &[200], &names.kind));
    }
    if r.supports("update") {
        let put = op(
            "put",
            "replace",
            "put",
            format!("replace the specified {kind}"),
            params::WRITE,
        );
        let put = with_body(put, &names.kind, ANY_BODY);
        on_item.push(answers(put, &[200, 201], &names.kind));
    }
    if r.supports("delete") {
        let delete = op(
            "delete",
            "delete",
            "delete",
            format!("delete a {kind}"),
            params::DELETE,
        );
        let delete = with_body(delete, &delete_options, ANY_BODY);
        let deleted = match r.returns_deleted_object {
            true => &names.kind,
            false => &status,
        };
        on_item.push(answers(delete, &[200, 202], deleted));
    }
    if r.supports("patch") {
        let patch = op(
            "patch",
            "patch",
            "patch",
            format!("partially update the specified {kind}"),
            params::PATCH,
        );
        let patch = with_body(patch, &meta("Patch"), PATCH_TYPES);
        on_item.push(answers(patch, &[200, 201], &names.kind));
    }

    let mut item_params = vec![params::NAME];
    item_params.extend(scope_params.iter().copied());
    item_params.push(params::PRETTY);
    let mut collection_params = scope_params;
    collection_params.push(params::PRETTY);

    let mut paths = Vec::new();
    for sub in &r.subresources {
        let suffix = capitalized(sub);
        let ops = subresource_verbs(sub)
            .iter()
            .filter_map(|verb| {
                let (method, name, action, body, params) = match *verb {
                    "get" => ("get", "read", "get", None, &[][..]),
                    "update" => (
                        "put",
                        "replace",
                        "put",
                        Some((&names.kind, ANY_BODY)),
                        params::WRITE,
                    ),
                    "patch" => (
                        "patch",
                        "partially update",
                        "patch",
                        Some((&meta("Patch"), PATCH_TYPES)),
                        params::PATCH,
                    ),
                    _ => return None,
                };
                let verb_id = if name == "partially update" {
                    "patch"
                } else {
                    name
                };
                let mut o = op(
                    method,
                    verb_id,
                    action,
                    format!("{name} {sub} of the specified {kind}"),
                    params,
                );
                o.id.push_str(&suffix);
                let o = match body {
                    Some((schema, consumes)) => with_body(o, schema, consumes),
                    None => o,
                };
                let codes: &[u16] = if method == "get" { &[200] } else { &[200, 201] };
                Some(answers(o, codes, &names.kind))
            })
            .collect();
        paths.push(PathItem {
            path: format!("{item}/{sub}"),
            params: item_params.clone(),
            ops,
        });
    }
    if r.is_namespaced() && r.supports("list") {
        let mut all = op(
            "get",
            "list",
            "list",
            format!("list or watch objects of kind {kind}"),
            params::LIST,
        );
        all.id = format!("list{prefix}{kind}ForAllNamespaces");
        all.produces = JSON_AND_WATCH;
        paths.push(PathItem {
            path: format!("{}/{}", base(s), r.plural),
            params: vec![params::PRETTY],
            ops: vec![answers(all, &[200], &names.list)],
        });
    }
    paths.push(PathItem {
        path: collection,
        params: collection_params,
        ops: on_collection,
    });
    paths.push(PathItem {
        path: item,
        params: item_params,
        ops: on_item,
    });
    paths.retain(|p| !p.ops.is_empty());
    paths
}

/// A GET of a discovery document (no action, no kind: Kubernetes marks none on these).
fn discovery(path: String, id: String, description: &str, tag: String, schema: &str) -> PathItem {
    PathItem {
        path,
        params: Vec::new(),
        ops: vec![Operation {
            method: "get",
            id,
            description: description.to_owned(),
            tag,
            action: None,
            gvk: None,
            params: &[],
            body: None,
            responses: vec![(200, schema.to_owned())],
            produces: JSON,
        }],
    }
}

/// `/api/v1/` or `/apis/<group>/<version>/`: the group version's resource list.
pub fn group_version_discovery(s: &Served) -> PathItem {
    discovery(
        format!("{}/", base(s)),
        format!("get{}APIResources", s.operation_prefix()),
        "get available resources",
        s.tag(),
        &meta("APIResourceList"),
    )
}

/// `/apis/<group>/`: the group's versions.
pub fn group_discovery(s: &Served) -> PathItem {
    let prefix = s.operation_prefix();
    let group_prefix = &prefix[..prefix.len() - s.resource.version.len()];
    let tag = s.tag();
    let group_tag = tag.split('_').next().unwrap_or_default().to_owned();
    discovery(
        format!("/apis/{}/", s.resource.group),
        format!("get{group_prefix}APIGroup"),
        "get information of a group",
        group_tag,
        &meta("APIGroup"),
    )
}

/// `/api/`: the core group's versions.
pub fn core_discovery() -> PathItem {
    discovery(
        "/api/".into(),
        "getCoreAPIVersions".into(),
        "get available API versions",
        "core".into(),
        &meta("APIVersions"),
    )
}

/// `/apis/`: the named groups.
pub fn groups_discovery() -> PathItem {
    discovery(
        "/apis/".into(),
        "getAPIVersions".into(),
        "get available API versions",
        "apis".into(),
        &meta("APIGroupList"),
    )
}

/// `/version/`: the server's version.
pub fn version() -> PathItem {
    discovery(
        "/version/".into(),
        "getCodeVersion".into(),
        "get the version information for this server",
        "version".into(),
        VERSION_INFO,
    )
}
