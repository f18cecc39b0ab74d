//! The metadata-only views (issue 16 item 5): `PartialObjectMetadata` of an object and
//! `PartialObjectMetadataList` of a list (`meta.<domain>/v1`, also `v1beta1`), as Kubernetes
//! answers `Accept: ...;as=PartialObjectMetadata[List];g=meta.<domain>;v=<v>`: the object's
//! `metadata` only, under the view's own kind and apiVersion; a list keeps its list metadata
//! (resourceVersion, continue, remainingItemCount), and every item is a PartialObjectMetadata.

use bytes::Bytes;
use serde_json::Map;
use serde_json::Value;

use super::Context;
use super::EventEncoder;
use super::MetaVersion;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// The `apiVersion` of the view kinds.
fn api_version(version: MetaVersion, flavor: Flavor) -> String {
    format!("{}/{}", flavor.meta_group(), version.as_str())
}

/// The `PartialObjectMetadata` of `object`.
fn partial_object(object: &mut Value, api_version: &str) -> Value {
    let metadata = object
        .get_mut("metadata")
        .map(Value::take)
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut partial = Map::new();
    partial.insert("kind".into(), "PartialObjectMetadata".into());
    partial.insert("apiVersion".into(), api_version.into());
    partial.insert("metadata".into(), metadata);
    Value::Object(partial)
}

/// The metadata-only view of `value`: a `PartialObjectMetadataList` of a list, a
/// `PartialObjectMetadata` of anything else.
pub(super) fn partial(mut value: Value, version: MetaVersion, flavor: Flavor) -> Value {
    let api_version = api_version(version, flavor);
    if !super::is_list(&value) {
        return partial_object(&mut value, &api_version);
    }
    let items: Vec<Value> = match value.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|mut item| partial_object(&mut item, &api_version))
            .collect(),
        _ => Vec::new(),
    };
    let mut list = Map::new();
    list.insert("kind".into(), "PartialObjectMetadataList".into());
    list.insert("apiVersion".into(), api_version.into());
    list.insert(
        "metadata".into(),
        value
            .get_mut("metadata")
            .map(Value::take)
            .unwrap_or_default(),
    );
    list.insert("items".into(), Value::Array(items));
    Value::Object(list)
}

/// A JSON watch whose objects are `PartialObjectMetadata` (ERROR Statuses stay Statuses).
pub(super) struct JsonEvents {
    version: MetaVersion,
    context: Context,
}

impl JsonEvents {
    pub(super) fn new(version: MetaVersion, context: Context) -> Self {
        Self { version, context }
    }
}

impl EventEncoder for JsonEvents {
    fn content_type(&self) -> String {
        "application/json".to_owned()
    }

    fn event(&mut self, kind: &str, mut object: Value) -> Result<Bytes, ApiError> {
        if kind != "ERROR" {
            let api_version = api_version(self.version, self.context.flavor);
            object = partial_object(&mut object, &api_version);
        }
        let mut line = serde_json::json!({"type": kind, "object": object}).to_string();
        line.push('\n');
        Ok(Bytes::from(line))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lists_keep_their_metadata_and_items_keep_only_theirs() {
        let list = json!({
            "kind": "ConfigMapList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "9", "continue": "c"},
            "items": [{"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}],
        });
        assert_eq!(
            partial(list, MetaVersion::V1, Flavor::Kubernetes),
            json!({
                "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": "9", "continue": "c"},
                "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {"name": "a"}}],
            })
        );
        let object = json!({"kind": "Pod", "metadata": {"name": "p"}, "spec": {}});
        assert_eq!(
            partial(object, MetaVersion::V1beta1, Flavor::Platform),
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.platform.io/v1beta1",
                "metadata": {"name": "p"}})
        );
    }
}
