//! What a write is judged or mutated by (Kubernetes' generic policy dispatcher): every policy
//! whose match constraints cover it, with every binding that covers it and each param the
//! binding selects, in policy order; a policy or binding that cannot be used is a step of
//! its own, in its place.

use std::sync::Arc;

use serde_json::Value;

use super::binding::Binding;
use super::cache::PolicyCache;
use super::cache::Snapshot;
use super::definition::CompiledPolicy;
use super::definition::PolicyBody;
use super::match_resources::Matched;
use super::params::Params;
use super::resources::Equivalents;
use super::resources::ResourceTable;
use crate::admission::Attributes;
use crate::admission::Namespaces;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// One step of a write's dispatch.
pub enum Step<'s, B> {
    /// A policy (no binding) or a binding that cannot be used: Kubernetes' configuration
    /// error (`failed to configure policy: ...`, `failed to configure binding: ...`).
    Misconfigured {
        /// The policy.
        policy: &'s CompiledPolicy<B>,
        /// The binding, for a binding's error.
        binding: Option<&'s Binding>,
        /// The message, `failed to configure ...` included.
        message: String,
    },
    /// One evaluation of a policy, for one binding and one of its params.
    Invoke {
        /// The position of the policy in the snapshot (steps of one policy are adjacent).
        hook: usize,
        /// The policy.
        policy: &'s CompiledPolicy<B>,
        /// The binding.
        binding: &'s Binding,
        /// The param (`None`: the policy has no params, or the binding names none).
        param: Option<Arc<Value>>,
        /// How the policy's constraints matched the write: as it is, or as an equivalent
        /// resource (`matchPolicy: Equivalent`) the write is judged as.
        matched: Matched,
    },
}

/// What a policy dispatcher follows and reads: the cache of one kind's policies and bindings,
/// their params, the namespaces and the served types.
pub struct Followed<B> {
    /// The policies and bindings, compiled.
    pub cache: Arc<PolicyCache<B>>,
    /// The params they name.
    pub params: Params,
    /// The replica's namespaces.
    pub namespaces: Arc<Namespaces>,
    /// The served types (`paramKind`, equivalent resources, conversion).
    pub resources: ResourceTable,
}

impl<B: PolicyBody> Followed<B> {
    /// Follows the `kind` (`validating`, `mutating`) policies and bindings `resources` serves
    /// (`None` when it serves neither kind).
    pub fn start(
        storage: &Arc<dyn Storage>,
        resources: ResourceTable,
        namespaces: Arc<Namespaces>,
        flavor: Flavor,
        kind: &str,
    ) -> Option<Self> {
        let cache = PolicyCache::follow(storage, &resources, flavor, kind)?;
        Some(Self {
            cache,
            params: Params::new(storage.clone(), resources.clone()),
            namespaces,
            resources,
        })
    }

    /// The steps of the write `attributes` describes over `snapshot` (a snapshot of
    /// [`Self::cache`]).
    pub async fn invocations<'s>(
        &self,
        snapshot: &'s Snapshot<B>,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Vec<Step<'s, B>> {
        let equivalents = Equivalents::new(&self.resources, attributes.resource);
        let (params, namespaces) = (&self.params, &self.namespaces);
        invocations(
            snapshot,
            params,
            namespaces,
            &equivalents,
            attributes,
            object,
            old,
        )
        .await
    }
}

/// The steps of the write `attributes` describes, over the policies of `snapshot`
/// (`equivalents`: the resources equivalent to the written one).
async fn invocations<'s, B: PolicyBody>(
    snapshot: &'s Snapshot<B>,
    params: &Params,
    namespaces: &Namespaces,
    equivalents: &Equivalents<'_>,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Vec<Step<'s, B>> {
    let namespace = |name: &str| namespaces.get(name);
    let mut steps = Vec::new();
    for (index, hook) in snapshot.hooks.iter().enumerate() {
        let policy = hook.policy.as_ref();
        let constraints = &policy.match_constraints;
        let Some(matched) = constraints.matched(attributes, object, old, namespace, equivalents)
        else {
            continue;
        };
        let param_type = match &policy.param_kind {
            Some(kind) => match params.resolve(kind) {
                Ok(resource) => Some((kind, resource)),
                Err(e) => {
                    steps.push(Step::Misconfigured {
                        policy,
                        binding: None,
                        message: format!("failed to configure policy: {e}"),
                    });
                    continue;
                }
            },
            None => None,
        };
        for binding in &hook.bindings {
            let covered = (binding.match_resources.as_ref()).is_none_or(|m| {
                (m.matched(attributes, object, old, namespace, equivalents)).is_some()
            });
            if !covered {
                continue;
            }
            let selected = match (&param_type, &binding.param_ref) {
                (Some((kind, resource)), Some(param_ref)) => {
                    params
                        .collect(kind, resource, param_ref, attributes.namespace)
                        .await
                }
                _ => Ok(vec![None]),
            };
            match selected {
                Ok(selected) => steps.extend(selected.into_iter().map(|param| Step::Invoke {
                    hook: index,
                    policy,
                    binding,
                    param,
                    matched: matched.clone(),
                })),
                Err(e) => steps.push(Step::Misconfigured {
                    policy,
                    binding: Some(binding),
                    message: format!("failed to configure binding: {e}"),
                }),
            }
        }
    }
    steps
}
