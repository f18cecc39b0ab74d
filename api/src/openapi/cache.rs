//! Every OpenAPI document of one server, encoded once: the v2 document (JSON, and protobuf
//! made from that JSON), the v3 documents by key (`api/v1`, `apis/apps`, `apis/apps/v1`, ...),
//! and the v3 index that names each with its hash. Each is a [`Document`]: bytes and the
//! quoted upper-case hex SHA-512 `ETag`, the same value upstream puts in `?hash=`.

use std::collections::BTreeMap;

use prost::Message;
use serde_json::json;

use super::components::KindNames;
use super::components::Spec;
use super::components::definitions;
use super::paths;
use super::paths::PathItem;
use super::served::Served;
use super::served::served;
use super::v2;
use super::v2_proto;
use super::v3;
use crate::discovery::Document;
use crate::discovery::version_info;
use crate::flavor::Flavor;
use crate::registry::Registry;

/// The encoded documents.
#[derive(Debug)]
pub struct Documents {
    /// `/openapi/v2` as JSON.
    pub v2: Document,
    /// `/openapi/v2` as protobuf (gnostic's `openapi.v2.Document`).
    pub v2_proto: Document,
    /// `/openapi/v3`.
    pub v3_index: Document,
    /// `/openapi/v3/<key>` by key.
    pub v3: BTreeMap<String, Document>,
}

impl Document {
    /// The hash of a document as `?hash=` carries it (the `ETag` without quotes).
    fn hash(&self) -> &str {
        self.etag.trim_matches('"')
    }
}

impl Documents {
    /// Builds and encodes every document of what `registry` serves in `flavor`.
    pub fn build(registry: &Registry, flavor: Flavor) -> Self {
        let served = served(registry, flavor);
        let info = json!({"title": "Apiary", "version": version_info()["gitVersion"]});
        let defs = definitions(&served, Spec::V3);
        let by_key = paths_by_key(&served, &defs.kinds);
        let v3: BTreeMap<String, Document> = by_key
            .iter()
            .map(|(key, items)| {
                let doc = v3::document(&info, items, &defs.schemas);
                (key.clone(), Document::new(&doc))
            })
            .collect();
        let v3_index = Document::new(&v3::index(v3.iter().map(|(k, d)| (k.as_str(), d.hash()))));

        let defs = definitions(&served, Spec::V2);
        let all: Vec<PathItem> = by_key.into_values().flatten().collect();
        let v2_json = v2::document(&info, &all, defs.schemas);
        let v2_proto = Document::from_bytes(v2_proto::document(&v2_json).encode_to_vec().into());
        let v2 = Document::new(&v2_json);
        Self {
            v2,
            v2_proto,
            v3_index,
            v3,
        }
    }

    /// The hash of the v3 document `key`, if there is one.
    pub fn v3_hash(&self, key: &str) -> Option<&str> {
        self.v3.get(key).map(Document::hash)
    }
}

/// The paths of every v3 document, by key: one per served group version, one per named
/// group, and `api`, `apis`, `version`.
fn paths_by_key(served: &[Served], kinds: &[KindNames]) -> BTreeMap<String, Vec<PathItem>> {
    let mut by_key: BTreeMap<String, Vec<PathItem>> = BTreeMap::new();
    by_key.insert("api".into(), vec![paths::core_discovery()]);
    by_key.insert("apis".into(), vec![paths::groups_discovery()]);
    by_key.insert("version".into(), vec![paths::version()]);
    for (s, names) in served.iter().zip(kinds) {
        let items = by_key
            .entry(s.group_version_key())
            .or_insert_with(|| vec![paths::group_version_discovery(s)]);
        items.extend(paths::resource_paths(s, names));
        if !s.resource.group.is_empty() {
            by_key
                .entry(format!("apis/{}", s.resource.group))
                .or_insert_with(|| vec![paths::group_discovery(s)]);
        }
    }
    by_key
}
