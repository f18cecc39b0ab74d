//! The `scale` subresource of deployments, replica sets, stateful sets (`apps/v1`) and
//! replication controllers (core `v1`): an `autoscaling/v1` Scale built from the parent, and
//! its update, which changes the parent's `spec.replicas` through the parent's normal update
//! (so the generation bumps and a stale `resourceVersion` is a 409). An apply to the Scale is
//! an apply of its `spec.replicas` to the parent's, as Kubernetes maps the Scale's managed
//! fields onto the parent's: the ownership is the parent's, recorded with `subresource: scale`.
//! A custom kind's Scale reads and writes the paths its definition names instead
//! ([`ScalePaths`]).

use k8s_openapi::api::autoscaling::v1::Scale;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Parent;
use super::parent::stored;
use crate::admission::ObjectKind;
use crate::admission::Operation;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::group::GroupKind;
use crate::registry::Store;
use crate::registry::WriteOptions;
use crate::registry::Written;
use crate::registry::store::RETRY_ATTEMPTS;
use crate::request::RequestInfo;
use crate::validation::FieldError;

/// The `apiVersion` of Scale in every flavor (`autoscaling` has no domain).
pub(crate) const SCALE_API_VERSION: &str = "autoscaling/v1";

/// The kind admission sees on a `scale` write.
const SCALE_KIND: ObjectKind<'static> = ObjectKind {
    group: "autoscaling",
    version: "v1",
    kind: "Scale",
};
/// The replicas of a parent without `spec.replicas` (every replicated kind defaults to 1).
const DEFAULT_REPLICAS: i64 = 1;

/// Where a custom kind keeps what its Scale shows (its definition's `scale` subresource):
/// each a JSON path split into its fields (`.spec.replicas` is `["spec", "replicas"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// `specReplicasPath`.
    pub spec_replicas: Vec<String>,
    /// `statusReplicasPath`.
    pub status_replicas: Vec<String>,
    /// `labelSelectorPath`: a string field holding the selector in its text form.
    pub label_selector: Option<Vec<String>>,
}

impl ScalePaths {
    /// The paths of a definition's `scale` subresource (`.spec.replicas`, ...), which CRD
    /// validation has checked to be simple field paths.
    pub fn new(spec_replicas: &str, status_replicas: &str, label_selector: Option<&str>) -> Self {
        let fields = |path: &str| {
            (path.split('.').filter(|f| !f.is_empty()))
                .map(str::to_owned)
                .collect()
        };
        Self {
            spec_replicas: fields(spec_replicas),
            status_replicas: fields(status_replicas),
            label_selector: label_selector.map(fields),
        }
    }
}

/// The value at `fields` of `obj`.
fn at<'a>(obj: &'a Value, fields: &[String]) -> Option<&'a Value> {
    fields.iter().try_fold(obj, |v, f| v.get(f))
}

/// `obj` with `value` at `fields`, making the objects on the way.
fn set_at(obj: &mut Value, fields: &[String], value: Value) {
    let Some((last, parents)) = fields.split_last() else {
        return;
    };
    let mut here = obj;
    for field in parents {
        let Value::Object(m) = here else { return };
        here = m.entry(field.clone()).or_insert_with(|| json!({}));
        if !here.is_object() {
            *here = json!({});
        }
    }
    if let Value::Object(m) = here {
        m.insert(last.clone(), value);
    }
}

/// The replicas the parent asks for, those it has, and its selector: from a custom kind's
/// paths (missing values are 0 and no selector, as apiextensions reads them), or from
/// `spec.replicas` (default 1), `status.replicas` and `spec.selector` (replication
/// controllers: a label map).
fn replicas_of(store: &Store, obj: &Value) -> (i64, i64, String) {
    if let Some(paths) = store.custom().and_then(|c| c.scale.as_ref()) {
        let int = |fields: &[String]| at(obj, fields).and_then(Value::as_i64).unwrap_or(0);
        let selector = (paths.label_selector.as_deref())
            .and_then(|fields| at(obj, fields))
            .and_then(Value::as_str)
            .unwrap_or_default();
        return (
            int(&paths.spec_replicas),
            int(&paths.status_replicas),
            selector.to_owned(),
        );
    }
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_REPLICAS);
    let status = obj
        .pointer("/status/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = match store.resource().kind.as_str() {
        "ReplicationController" => map_selector(obj.pointer("/spec/selector")),
        _ => label_selector(obj.pointer("/spec/selector")),
    };
    (replicas, status, selector)
}

/// `obj` (a parent of `store`) asking for `replicas`.
fn set_replicas(store: &Store, obj: &mut Value, replicas: Value) {
    match store.custom().and_then(|c| c.scale.as_ref()) {
        Some(paths) => set_at(obj, &paths.spec_replicas, replicas),
        None => set_at(obj, &["spec".to_owned(), "replicas".to_owned()], replicas),
    }
}

/// The Scale of the parent `obj` of `store`: its name, namespace, uid, resourceVersion and
/// creation time; the replicas asked for; the replicas it has and its selector as a string.
fn scale_of(store: &Store, obj: &Value) -> Value {
    let mut metadata = Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = obj.pointer(&format!("/metadata/{field}")) {
            metadata.insert(field.to_owned(), v.clone());
        }
    }
    let (replicas, has, selector) = replicas_of(store, obj);
    let mut status = Map::new();
    status.insert("replicas".to_owned(), has.into());
    if !selector.is_empty() {
        status.insert("selector".to_owned(), selector.into());
    }
    json!({
        "kind": "Scale",
        "apiVersion": SCALE_API_VERSION,
        "metadata": metadata,
        "spec": {"replicas": replicas},
        "status": status,
    })
}

/// A label map as upstream's `SelectorFromSet(...).String()`: `k=v` joined by commas, in key
/// order.
fn map_selector(selector: Option<&Value>) -> String {
    let Some(Value::Object(labels)) = selector else {
        return String::new();
    };
    let mut parts: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    parts.sort();
    parts
        .into_iter()
        .map(|(_, p)| p)
        .collect::<Vec<_>>()
        .join(",")
}

/// A `LabelSelector` as upstream's `LabelSelectorAsSelector(...).String()`: one requirement
/// per label and expression (`k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`), sorted by key,
/// set values sorted; nothing for an absent or empty selector.
fn label_selector(selector: Option<&Value>) -> String {
    let Some(selector) = selector else {
        return String::new();
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(Value::Object(labels)) = selector.get("matchLabels") {
        for (k, v) in labels {
            let v = v.as_str().unwrap_or_default();
            requirements.push((k.clone(), format!("{k}={v}")));
        }
    }
    for expr in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
        let mut values: Vec<&str> = expr
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let set = values.join(",");
        let text = match expr.get("operator").and_then(Value::as_str) {
            Some("In") => format!("{key} in ({set})"),
            Some("NotIn") => format!("{key} notin ({set})"),
            Some("Exists") => key.to_owned(),
            Some("DoesNotExist") => format!("!{key}"),
            _ => continue,
        };
        requirements.push((key.to_owned(), text));
    }
    // A stable sort by key, as upstream's `ByKey`.
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    requirements
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",")
}

/// The Scale of the parent, read as a GET of the parent would be (404 when absent); PATCH
/// applies its patch to this.
pub(crate) async fn get_scale(parent: &Parent<'_>) -> Result<Value, ApiError> {
    Ok(scale_of(parent.store, &parent.read().await?))
}

fn invalid(name: &str, causes: Vec<FieldError>) -> ApiError {
    ApiError::Invalid {
        kind: GroupKind {
            group: "autoscaling".to_owned(),
            kind: "Scale".to_owned(),
        },
        name: name.to_owned(),
        causes,
    }
}

/// Sets the parent's replicas to those of `typed` (a Scale) and answers the new Scale: the
/// entry of PUT, and of PATCH, which applies the patch to the current Scale (a GET of the
/// subresource) and hands the result here.
///
/// Checked as upstream's scale update: the body's name must be the URL's (400), its
/// `spec.replicas` not negative (422 on `Scale.autoscaling`). With a `resourceVersion`, the
/// parent must be at it (409); without one, a race with another writer re-reads the parent.
/// The parent goes through its store's update, so its own rules, generation and dry run
/// apply.
pub(crate) async fn update_scale(
    parent: &Parent<'_>,
    typed: Scale,
    write: WriteOptions,
) -> Result<Written, ApiError> {
    let body_name = typed.metadata.name.clone().unwrap_or_default();
    if body_name != parent.name {
        return Err(ApiError::BadRequest(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            excerpt(&body_name),
            excerpt(parent.name)
        )));
    }
    let requested = (typed.metadata.resource_version.clone()).filter(|rv| !rv.is_empty());
    let write = WriteOptions {
        dry_run: write.dry_run,
        admitted: true,
        ..WriteOptions::default()
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut obj = parent.read().await?;
        let old = scale_of(parent.store, &obj);
        let update = (Operation::Update, "scale");
        let (admitted, warnings) = parent
            .admit(update, SCALE_KIND, &typed, Some(&old), write.dry_run)
            .await?;
        let replicas = admitted.spec.and_then(|s| s.replicas).unwrap_or(0);
        if replicas < 0 {
            return Err(invalid(
                parent.name,
                vec![FieldError::invalid(
                    "spec.replicas",
                    i64::from(replicas),
                    "must be greater than or equal to 0",
                )],
            ));
        }
        if let Some(rv) = &requested
            && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.insert("resourceVersion".to_owned(), rv.clone().into());
        }
        set_replicas(parent.store, &mut obj, replicas.into());
        let body = obj.to_string().into_bytes();
        match parent
            .store
            .update(
                parent.storage,
                parent.namespace,
                parent.name,
                "",
                &body,
                write.clone(),
            )
            .await
        {
            Ok(written) => {
                let scale = scale_of(parent.store, &stored(&written.body)?);
                return Ok(Written {
                    body: scale.to_string().into_bytes(),
                    warnings,
                });
            }
            Err(ApiError::Conflict { .. }) if requested.is_none() && attempt < RETRY_ATTEMPTS => {
                continue;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Applies the Scale configuration `config` (checked to be a Scale) for `write`'s manager:
/// its `spec.replicas` (and `resourceVersion`, a precondition) applied to the parent through
/// the parent's store, so the parent's owners of `spec.replicas` conflict as on the parent
/// (R-RES-204). Answers the new Scale. `request` is the request as authorized.
pub(crate) async fn apply_scale(
    parent: &Parent<'_>,
    config: &Value,
    write: WriteOptions,
    request: &RequestInfo,
) -> Result<Written, ApiError> {
    let rt = parent.store.resource();
    // Admission sees the Scale the apply asks for: the current one with the configuration's
    // replicas (a mutating plugin may change them).
    let old = get_scale(parent).await?;
    let mut asked = old.clone();
    if let Some(replicas) = config.pointer("/spec/replicas") {
        asked["spec"]["replicas"] = replicas.clone();
    }
    let update = (Operation::Update, "scale");
    let (admitted, warnings) = parent
        .admit(update, SCALE_KIND, &asked, Some(&old), write.dry_run)
        .await?;
    let write = WriteOptions {
        admitted: true,
        ..write
    };
    let name = config
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or(parent.name);
    let mut on_parent = json!({"apiVersion": rt.api_version(), "kind": rt.kind,
        "metadata": {"name": name}});
    if let Some(rv) = config.pointer("/metadata/resourceVersion") {
        on_parent["metadata"]["resourceVersion"] = rv.clone();
    }
    if config.pointer("/spec/replicas").is_some()
        && let Some(replicas) = admitted.pointer("/spec/replicas")
    {
        set_replicas(parent.store, &mut on_parent, replicas.clone());
    }
    let target = (parent.namespace, parent.name, "scale");
    let body = on_parent.to_string().into_bytes();
    let applied = parent
        .store
        .apply(parent.storage, target, &body, write, request)
        .await?;
    let scale = scale_of(parent.store, &stored(&applied.written.body)?);
    Ok(Written {
        body: scale.to_string().into_bytes(),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_are_written_as_upstream_strings() {
        let selector = json!({
            "matchLabels": {"tier": "web", "app": "x"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "zone", "operator": "DoesNotExist"},
                {"key": "b", "operator": "Exists"},
                {"key": "c", "operator": "NotIn", "values": ["z"]},
            ],
        });
        assert_eq!(
            label_selector(Some(&selector)),
            "app=x,b,c notin (z),env in (dev,prod),tier=web,!zone"
        );
        assert_eq!(label_selector(None), "");
        assert_eq!(label_selector(Some(&json!({}))), "");
        assert_eq!(map_selector(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
    }

    #[test]
    fn scale_carries_the_parent_identity_and_replicas() {
        let rc = json!({
            "metadata": {"name": "r", "namespace": "d", "uid": "u", "resourceVersion": "7",
                "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"l": "v"}},
            "spec": {"replicas": 3, "selector": {"app": "r"}},
            "status": {"replicas": 2},
        });
        let registry = crate::registry::Registry::builtin(crate::flavor::Flavor::Kubernetes);
        let store = |plural| registry.builtin_store("", "v1", plural).expect("served");
        assert_eq!(
            scale_of(store("replicationcontrollers"), &rc),
            json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": "r", "namespace": "d", "uid": "u", "resourceVersion": "7",
                    "creationTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"replicas": 3},
                "status": {"replicas": 2, "selector": "app=r"}})
        );
        let deployments = registry.builtin_store("apps", "v1", "deployments");
        let bare = scale_of(
            deployments.expect("served"),
            &json!({"metadata": {"name": "d"}}),
        );
        assert_eq!(bare["spec"]["replicas"], 1);
        assert_eq!(bare["status"], json!({"replicas": 0}));
    }

    struct Plain;
    impl crate::registry::Strategy for Plain {}

    // A custom kind's Scale reads its definition's paths; what is missing reads 0.
    #[test]
    fn a_custom_scale_follows_its_paths() {
        let paths = ScalePaths::new(".spec.count", ".status.count", Some(".status.sel"));
        assert_eq!(paths.spec_replicas, ["spec", "count"]);
        let store = crate::registry::Store::new(
            crate::registry::Registry::builtin(crate::flavor::Flavor::Kubernetes)
                .builtin_store("", "v1", "configmaps")
                .expect("served")
                .resource()
                .clone(),
            Box::new(Plain),
        )
        .custom_kind(crate::registry::CustomKind {
            terminating: false,
            scale: Some(paths),
            schema: std::sync::Arc::new(json!({"type": "object"})),
            deprecation: None,
            columns: std::sync::Arc::new(crate::codec::CustomColumns::compile(&[])),
        });
        let obj = json!({"metadata": {"name": "w"}, "spec": {"count": 4},
                         "status": {"count": 2, "sel": "app=w"}});
        let scale = scale_of(&store, &obj);
        assert_eq!(scale["spec"]["replicas"], 4);
        assert_eq!(scale["status"], json!({"replicas": 2, "selector": "app=w"}));
        let bare = scale_of(&store, &json!({"metadata": {"name": "w"}}));
        assert_eq!(bare["spec"]["replicas"], 0);
        let mut obj = json!({"metadata": {"name": "w"}, "spec": "not an object"});
        set_replicas(&store, &mut obj, 7.into());
        assert_eq!(obj["spec"], json!({"count": 7}));
    }
}
