//! Discovery (spec 002 "API versions and groups"): the documents that tell clients what the
//! server serves, generated from the registry and encoded once at start (the registry is
//! static), each with an `ETag`. `/api` and `/apis` also answer aggregated discovery when
//! `Accept` asks for it; `/version` is the server's version.

mod aggregated;
mod etag;
mod legacy;
mod negotiate;
mod version;

use std::collections::HashMap;

pub use etag::Document;
pub use legacy::storage_version_hash;
pub(crate) use version::RELEASE_MINOR;
pub use version::version_info;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::Registry;
use negotiate::Form;

/// Every discovery document of one server, encoded.
#[derive(Debug)]
pub struct Discovery {
    /// Legacy documents by path, without the surrounding slashes (`apis/apps/v1`).
    legacy: HashMap<String, Document>,
    /// The aggregated document of `/api`.
    aggregated_core: Document,
    /// The aggregated document of `/apis`.
    aggregated_named: Document,
    /// The `Content-Type` of the aggregated documents.
    aggregated_type: String,
    flavor: Flavor,
}

/// How to answer one discovery GET.
#[derive(Debug)]
pub struct Answer<'a> {
    /// The document (its body is left out when `not_modified`).
    pub document: &'a Document,
    /// The `Content-Type`.
    pub content_type: &'a str,
    /// Whether the answer depends on `Accept` (`/api` and `/apis`), so caches must key on it.
    pub varies_by_accept: bool,
    /// Whether `If-None-Match` named the document: 304 without a body.
    pub not_modified: bool,
}

impl Discovery {
    /// Builds and encodes every document of what `registry` serves in `flavor`.
    pub fn new(registry: &Registry, flavor: Flavor) -> Self {
        let mut legacy = HashMap::new();
        let mut add = |path: String, value: &serde_json::Value| {
            legacy.insert(path, Document::new(value));
        };
        add("api".into(), &legacy::core_versions(registry));
        for v in legacy::versions(registry, "") {
            if let Some(list) = legacy::resource_list(registry, flavor, "", v) {
                add(format!("api/{v}"), &list);
            }
        }
        add("apis".into(), &legacy::group_list(registry));
        for g in legacy::named_groups(registry) {
            add(format!("apis/{g}"), &legacy::group(registry, g));
            for v in legacy::versions(registry, g) {
                if let Some(list) = legacy::resource_list(registry, flavor, g, v) {
                    add(format!("apis/{g}/{v}"), &list);
                }
            }
        }
        Self {
            legacy,
            aggregated_core: Document::new(&aggregated::core(registry, flavor)),
            aggregated_named: Document::new(&aggregated::named(registry, flavor)),
            aggregated_type: negotiate::aggregated_content_type(flavor),
            flavor,
        }
    }

    /// The answer to a GET of `path` with the request's `Accept` and `If-None-Match`; 404 for
    /// a path that is no discovery document.
    pub fn answer(
        &self,
        path: &str,
        accept: Option<&str>,
        if_none_match: Option<&str>,
    ) -> Result<Answer<'_>, ApiError> {
        let key = path
            .split('/')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("/");
        let varies_by_accept = key == "api" || key == "apis";
        let aggregated = match key.as_str() {
            "api" => Some(&self.aggregated_core),
            "apis" => Some(&self.aggregated_named),
            _ => None,
        };
        let (document, content_type) = match aggregated {
            Some(doc) if negotiate::negotiate(accept, self.flavor) == Form::Aggregated => {
                (doc, self.aggregated_type.as_str())
            }
            _ => (
                self.legacy.get(&key).ok_or(ApiError::UnknownResource)?,
                "application/json",
            ),
        };
        Ok(Answer {
            document,
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
        let registry = Registry::builtin(Flavor::Kubernetes);
        let discovery = Discovery::new(&registry, Flavor::Kubernetes);
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
