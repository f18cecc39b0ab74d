//! Discovery (spec 002 "API versions and groups"): the documents that tell clients what the
//! server serves, generated from the registry and encoded once per state of it (the built-in
//! rows never change; custom resources come and go with their definitions, so the documents
//! are built again, once, after each change), each with an `ETag`. `/api` and `/apis` also
//! answer aggregated discovery when `Accept` asks for it; `/version` is the server's version.

mod aggregated;
mod etag;
mod legacy;
mod negotiate;
mod version;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::RwLock;

pub use etag::Document;
pub use legacy::storage_version_hash;
pub(crate) use version::MAJOR;
pub(crate) use version::MINOR;
pub use version::version_info;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::Registry;
use crate::registry::ResourceType;
use negotiate::Form;

/// The discovery documents of one server, kept current with its registry.
pub struct Discovery {
    registry: Arc<Registry>,
    flavor: Flavor,
    /// The documents of the registry's state they were built from.
    built: RwLock<Arc<Documents>>,
}

/// Every discovery document of one state of the registry, encoded.
#[derive(Debug)]
struct Documents {
    /// The [`Registry::generation`] they describe.
    generation: u64,
    /// Legacy documents by path, without the surrounding slashes (`apis/apps/v1`).
    legacy: HashMap<String, Document>,
    /// The aggregated document of `/api`.
    aggregated_core: Document,
    /// The aggregated document of `/apis`.
    aggregated_named: Document,
}

/// How to answer one discovery GET.
#[derive(Debug)]
pub struct Answer {
    /// The document (its body is left out when `not_modified`).
    pub document: Document,
    /// The `Content-Type`.
    pub content_type: String,
    /// Whether the answer depends on `Accept` (`/api` and `/apis`), so caches must key on it.
    pub varies_by_accept: bool,
    /// Whether `If-None-Match` named the document: 304 without a body.
    pub not_modified: bool,
}

impl Documents {
    /// Builds and encodes every document of `served` (in priority order) in `flavor`.
    fn new(served: &[ResourceType], flavor: Flavor, generation: u64) -> Self {
        let mut legacy = HashMap::new();
        let mut add = |path: String, value: &serde_json::Value| {
            legacy.insert(path, Document::new(value));
        };
        add("api".into(), &legacy::core_versions(served));
        for v in legacy::versions(served, "") {
            if let Some(list) = legacy::resource_list(served, flavor, "", v) {
                add(format!("api/{v}"), &list);
            }
        }
        add("apis".into(), &legacy::group_list(served));
        for g in legacy::named_groups(served) {
            add(format!("apis/{g}"), &legacy::group(served, g));
            for v in legacy::versions(served, g) {
                if let Some(list) = legacy::resource_list(served, flavor, g, v) {
                    add(format!("apis/{g}/{v}"), &list);
                }
            }
        }
        Self {
            generation,
            legacy,
            aggregated_core: Document::new(&aggregated::core(served, flavor)),
            aggregated_named: Document::new(&aggregated::named(served, flavor)),
        }
    }
}

impl Discovery {
    /// The documents of what `registry` serves in `flavor`.
    pub fn new(registry: Arc<Registry>, flavor: Flavor) -> Self {
        let generation = registry.generation();
        let documents = Documents::new(&registry.served_types(), flavor, generation);
        Self {
            registry,
            flavor,
            built: RwLock::new(Arc::new(documents)),
        }
    }

    /// The documents of the registry as it is now: built again if it changed since.
    fn current(&self) -> Arc<Documents> {
        let generation = self.registry.generation();
        let built = self.built.read().unwrap_or_else(PoisonError::into_inner);
        if built.generation == generation {
            return built.clone();
        }
        drop(built);
        let mut built = self.built.write().unwrap_or_else(PoisonError::into_inner);
        if built.generation != generation {
            let served = self.registry.served_types();
            *built = Arc::new(Documents::new(&served, self.flavor, generation));
        }
        built.clone()
    }

    /// The answer to a GET of `path` with the request's `Accept` and `If-None-Match`; 404 for
    /// a path that is no discovery document.
    pub fn answer(
        &self,
        path: &str,
        accept: Option<&str>,
        if_none_match: Option<&str>,
    ) -> Result<Answer, ApiError> {
        let key = path
            .split('/')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("/");
        let varies_by_accept = key == "api" || key == "apis";
        let documents = self.current();
        let aggregated = match key.as_str() {
            "api" => Some(&documents.aggregated_core),
            "apis" => Some(&documents.aggregated_named),
            _ => None,
        };
        let (document, content_type) = match aggregated {
            Some(doc) if negotiate::negotiate(accept, self.flavor) == Form::Aggregated => {
                (doc, negotiate::aggregated_content_type(self.flavor))
            }
            _ => (
                documents
                    .legacy
                    .get(&key)
                    .ok_or(ApiError::UnknownResource)?,
                "application/json".to_owned(),
            ),
        };
        Ok(Answer {
            document: document.clone(),
            content_type,
            varies_by_accept,
            not_modified: if_none_match.is_some_and(|tags| document.matches(tags)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_group_version_has_a_document() {
        let registry = Arc::new(Registry::builtin(Flavor::Kubernetes));
        let discovery = Discovery::new(registry.clone(), Flavor::Kubernetes);
        for store in registry.stores() {
            let r = store.resource();
            let path = if r.group.is_empty() {
                format!("/api/{}", r.version)
            } else {
                format!("/apis/{}/{}", r.group, r.version)
            };
            assert!(discovery.answer(&path, None, None).is_ok(), "{path}");
        }
        assert!(discovery.answer("/apis/apps/v2", None, None).is_err());
        assert!(discovery.answer("/apis/", None, None).is_ok());
    }
}
