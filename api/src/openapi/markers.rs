//! Kubernetes' list, map and patch markers on the schema properties (`x-kubernetes-list-type`,
//! `-list-map-keys`, `-map-type`, `-patch-strategy`, `-patch-merge-key`), from the markers
//! table in `schema::markers`. kubectl builds its strategic merge patches from them.

use serde_json::Map;
use serde_json::Value;

use crate::schema::markers::markers_of;

/// Puts the markers of every marked property on the properties of `schemas`.
pub fn mark(schemas: &mut Map<String, Value>) {
    for (name, schema) in schemas.iter_mut() {
        let Some(Value::Object(properties)) = schema.get_mut("properties") else {
            continue;
        };
        for (property, m) in markers_of(name) {
            let Some(Value::Object(target)) = properties.get_mut(property) else {
                continue;
            };
            if let Some(key) = m.patch_merge_key {
                target.insert("x-kubernetes-patch-merge-key".into(), key.into());
            }
            if let Some(strategy) = m.patch_strategy {
                target.insert(
                    "x-kubernetes-patch-strategy".into(),
                    strategy.as_str().into(),
                );
            }
            if let Some(list) = m.list_type {
                if !list.map_keys().is_empty() {
                    target.insert("x-kubernetes-list-map-keys".into(), list.map_keys().into());
                }
                target.insert("x-kubernetes-list-type".into(), list.as_str().into());
            }
            if let Some(map) = m.map_type {
                target.insert("x-kubernetes-map-type".into(), map.as_str().into());
            }
        }
    }
}
