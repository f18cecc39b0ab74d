//! The params of bindings (Kubernetes' `CollectParams`): each param resource's objects are
//! kept by an [`ObjectCache`] started the first time a binding needs them, and a binding's
//! `paramRef` picks its params there by name or label selector.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use serde_json::Value;

use super::binding::ParamRef;
use super::definition::ParamKind;
use super::objects::ObjectCache;
use super::resources::ResourceTable;
use crate::registry::ResourceType;
use crate::storage::Storage;
use crate::validation::label_selector;

/// How long a request waits for a param resource's first list (Kubernetes' one second).
const SYNC_WAIT: Duration = Duration::from_secs(1);

/// The param resources' caches.
pub struct Params {
    storage: Arc<dyn Storage>,
    resources: ResourceTable,
    sources: Mutex<HashMap<String, Arc<ObjectCache>>>,
}

impl Params {
    /// No param resource followed yet.
    pub fn new(storage: Arc<dyn Storage>, resources: ResourceTable) -> Self {
        Self {
            storage,
            resources,
            sources: Mutex::default(),
        }
    }

    /// The served resource type of `kind`, or Kubernetes' configuration error.
    pub fn resolve(&self, kind: &ParamKind) -> Result<ResourceType, String> {
        let (group, version) = kind.group_version();
        self.resources
            .by_kind(group, version, &kind.kind)
            .ok_or_else(|| {
                format!(
                    "failed to find resource referenced by paramKind: '{}'",
                    kind.gvk()
                )
            })
    }

    fn source(&self, resource: &ResourceType) -> Arc<ObjectCache> {
        let prefix = resource.key_prefix();
        let mut sources = self.sources.lock().unwrap_or_else(PoisonError::into_inner);
        sources
            .entry(prefix.clone())
            .or_insert_with(|| ObjectCache::start(self.storage.clone(), prefix))
            .clone()
    }

    /// The params a binding's `param_ref` selects among `resource`'s objects for a write in
    /// `namespace` (`None` for the one evaluation without params), or the binding's
    /// configuration error.
    pub async fn collect(
        &self,
        kind: &ParamKind,
        resource: &ResourceType,
        param_ref: &ParamRef,
        namespace: &str,
    ) -> Result<Vec<Option<Arc<Value>>>, String> {
        let source = self.source(resource);
        let mut params_namespace = param_ref.namespace.as_str();
        if resource.is_namespaced() && params_namespace.is_empty() {
            if namespace.is_empty() {
                return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".to_owned());
            }
            params_namespace = namespace;
        }
        if !source.synced(SYNC_WAIT).await {
            return Err(format!(
                "paramKind kind `&ParamKind{{APIVersion:{},Kind:{},}}` not yet synced to use for admission",
                kind.api_version, kind.kind
            ));
        }
        if !param_ref.namespace.is_empty() && !resource.is_namespaced() {
            return Err(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
                    .to_owned(),
            );
        }
        let params: Vec<Arc<Value>> = if !param_ref.name.is_empty() {
            let key = resource.object_key(params_namespace, &param_ref.name);
            source.get(&key).into_iter().collect()
        } else if let Some(selector) = &param_ref.selector {
            let collection = resource.collection_key(Some(params_namespace));
            let empty = serde_json::Map::new();
            (source.under(&collection).into_iter())
                .filter(|p| {
                    let labels = p.pointer("/metadata/labels").and_then(Value::as_object);
                    label_selector::matches(selector, labels.unwrap_or(&empty))
                })
                .collect()
        } else {
            return Err("one of name or selector must be provided".to_owned());
        };
        if params.is_empty() && param_ref.deny_when_missing {
            return Err(
                "no params found for policy binding with `Deny` parameterNotFoundAction".to_owned(),
            );
        }
        Ok(params.into_iter().map(Some).collect())
    }
}
