//! Kubernetes' `attemptToDeleteItem` for one dependent: its owner references classified by
//! live reads (absent — not found, or another uid — is dangling; an owner being deleted with
//! `foregroundDeletion` is waiting; any other is solid), then: with a solid owner, the
//! dangling and waiting references are removed; with only waiting owners and dependents of
//! its own, it is deleted in the foreground (references that would block a circle are
//! unblocked first); otherwise it is deleted with the policy its own finalizers ask for.

use std::sync::Arc;

use apiary_api::registry::FOREGROUND_FINALIZER;
use apiary_api::registry::ORPHAN_FINALIZER;
use serde_json::Value;
use serde_json::json;

use super::Collector;
use super::graph::Graph;
use super::graph::Node;
use super::graph::OwnerRef;
use crate::controllers::client::ControllerError;

/// What a live read says about one owner reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// Present and not waiting for its dependents.
    Solid,
    /// Absent: not found, or found with another uid.
    Dangling,
    /// Being deleted in the foreground.
    Waiting,
}

impl Collector<'_> {
    /// Deletes `item` or removes its references to absent owners, as its owners' live state
    /// asks.
    pub(super) async fn attempt_to_delete(
        &mut self,
        graph: &Graph,
        item: &Node,
    ) -> Result<(), ControllerError> {
        let Some(latest) = self.client.get(&item.path()).await? else {
            return Ok(());
        };
        let Some(latest) = Node::from_object(&item.resource, &latest) else {
            return Ok(());
        };
        if latest.uid != item.uid || latest.deleting || latest.owners.is_empty() {
            return Ok(());
        }
        let mut classes = Vec::with_capacity(latest.owners.len());
        for reference in &latest.owners {
            match self.classify(&latest, reference).await? {
                Some(class) => classes.push(class),
                None => return Ok(()),
            }
        }
        let removed: Vec<&str> = latest
            .owners
            .iter()
            .zip(&classes)
            .filter(|(_, class)| **class != Owner::Solid)
            .map(|(reference, _)| reference.uid.as_str())
            .collect();
        if classes.contains(&Owner::Solid) {
            if !removed.is_empty() {
                self.remove_references(&latest, &removed).await?;
            }
            return Ok(());
        }
        let has_dependents = graph.dependents(item).next().is_some();
        let policy = if classes.contains(&Owner::Waiting) && has_dependents {
            if graph.dependents(item).any(|(d, _)| d.deleting_dependents()) {
                self.unblock(&latest, &latest.owners, &classes).await?;
            }
            "Foreground"
        } else if latest.has_finalizer(ORPHAN_FINALIZER) {
            "Orphan"
        } else if latest.has_finalizer(FOREGROUND_FINALIZER) {
            "Foreground"
        } else {
            "Background"
        };
        self.delete(&latest, policy).await
    }

    /// The state of `reference`'s owner; `None` when it cannot be judged: an unknown kind, or
    /// a cluster-scoped dependent naming a namespaced owner (reported with an Event).
    async fn classify(
        &mut self,
        dependent: &Node,
        reference: &OwnerRef,
    ) -> Result<Option<Owner>, ControllerError> {
        let Some(resource) = self
            .resources
            .of_kind(&reference.api_version, &reference.kind)
        else {
            tracing::debug!(
                dependent = %dependent.path(),
                api_version = %reference.api_version,
                kind = %reference.kind,
                "owner reference to a kind that is not served",
            );
            return Ok(None);
        };
        if resource.namespaced && dependent.namespace.is_empty() {
            self.report_invalid_namespace(dependent, reference).await?;
            return Ok(None);
        }
        let path = resource.object(&dependent.namespace, &reference.name);
        let owner = self.client.get(&path).await?;
        let resource = Arc::new(resource.clone());
        let Some(owner) = owner.as_ref().and_then(|o| Node::from_object(&resource, o)) else {
            return Ok(Some(Owner::Dangling));
        };
        Ok(Some(if owner.uid != reference.uid {
            Owner::Dangling
        } else if owner.deleting_dependents() {
            Owner::Waiting
        } else {
            Owner::Solid
        }))
    }

    /// Deletes `item` (if its uid is still the same) with `policy`.
    pub(super) async fn delete(
        &mut self,
        item: &Node,
        policy: &str,
    ) -> Result<(), ControllerError> {
        let options = json!({
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "preconditions": {"uid": item.uid},
            "propagationPolicy": policy,
        });
        self.spend();
        self.client.delete_with(&item.path(), &options).await?;
        tracing::info!(object = %item.path(), policy, "garbage collected");
        Ok(())
    }

    /// Sets `blockOwnerDeletion=false` on `item`'s references to owners waiting for their
    /// dependents, so that a circle of foreground deletions does not wait on itself.
    async fn unblock(
        &mut self,
        item: &Node,
        references: &[OwnerRef],
        classes: &[Owner],
    ) -> Result<(), ControllerError> {
        let waiting: Vec<&str> = references
            .iter()
            .zip(classes)
            .filter(|(r, class)| **class == Owner::Waiting && r.block)
            .map(|(r, _)| r.uid.as_str())
            .collect();
        if waiting.is_empty() {
            return Ok(());
        }
        self.rewrite_references(item, |reference| {
            let uid = reference["uid"].as_str().unwrap_or_default();
            if waiting.contains(&uid) {
                reference["blockOwnerDeletion"] = Value::Bool(false);
            }
            true
        })
        .await
    }
}
