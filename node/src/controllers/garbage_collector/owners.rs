//! The collector's work on owners being deleted and its writes to metadata: an owner with
//! the `orphan` finalizer has its references removed from every dependent, then the
//! finalizer (Kubernetes' `orphanDependents`); an owner with `foregroundDeletion` keeps it
//! until no dependent blocks it (`processDeletingDependentsItem`). Every write is a merge
//! patch of the object as just read, conditional on its `resourceVersion` and uid, so a
//! concurrent change makes it fail and the next pass decide again.

use apiary_api::registry::FOREGROUND_FINALIZER;
use apiary_api::registry::ORPHAN_FINALIZER;
use chrono::SecondsFormat;
use serde_json::Value;
use serde_json::json;
use sha2::Digest;
use sha2::Sha256;

use super::Collector;
use super::graph::Graph;
use super::graph::Node;
use super::graph::OwnerRef;
use crate::controllers::client::ControllerError;

/// The namespace of Events about cluster-scoped objects, as in Kubernetes.
const CLUSTER_EVENTS_NAMESPACE: &str = "default";

impl Collector<'_> {
    /// `owner` is being deleted with the `orphan` finalizer: its references leave its
    /// dependents, then the finalizer leaves it.
    pub(super) async fn orphan_dependents(
        &mut self,
        graph: &Graph,
        owner: &Node,
    ) -> Result<(), ControllerError> {
        for (dependent, _) in graph.dependents(owner) {
            self.remove_references(dependent, &[owner.uid.as_str()])
                .await?;
        }
        self.remove_finalizer(owner, ORPHAN_FINALIZER).await
    }

    /// `owner` is being deleted with the `foregroundDeletion` finalizer: once no dependent
    /// blocks it, the finalizer leaves it (its dependents are deleted by
    /// [`Collector::attempt_to_delete`], as their owner is waiting for them).
    pub(super) async fn deleting_dependents(
        &mut self,
        graph: &Graph,
        owner: &Node,
    ) -> Result<(), ControllerError> {
        if graph
            .dependents(owner)
            .any(|(_, reference)| reference.block)
        {
            return Ok(());
        }
        self.remove_finalizer(owner, FOREGROUND_FINALIZER).await
    }

    /// Removes from `item` its references to the owners `uids`.
    pub(super) async fn remove_references(
        &mut self,
        item: &Node,
        uids: &[&str],
    ) -> Result<(), ControllerError> {
        self.rewrite_references(item, |reference| {
            !uids.contains(&reference["uid"].as_str().unwrap_or_default())
        })
        .await
    }

    /// Rewrites `item`'s owner references as read now: `keep` may change each and says
    /// whether it stays. Nothing is written when nothing changes.
    pub(super) async fn rewrite_references(
        &mut self,
        item: &Node,
        mut keep: impl FnMut(&mut Value) -> bool,
    ) -> Result<(), ControllerError> {
        let Some(latest) = self.current(item).await? else {
            return Ok(());
        };
        let before = latest["metadata"]["ownerReferences"].clone();
        let mut references: Vec<Value> = before.as_array().cloned().unwrap_or_default();
        references.retain_mut(|reference| keep(reference));
        if Value::Array(references.clone()) == before {
            return Ok(());
        }
        let references = if references.is_empty() {
            Value::Null
        } else {
            Value::Array(references)
        };
        self.patch_metadata(item, &latest, json!({"ownerReferences": references}))
            .await
    }

    /// Removes `finalizer` from `item`, if it still has it.
    async fn remove_finalizer(
        &mut self,
        item: &Node,
        finalizer: &str,
    ) -> Result<(), ControllerError> {
        let Some(latest) = self.current(item).await? else {
            return Ok(());
        };
        let finalizers: Vec<&Value> = latest["metadata"]["finalizers"]
            .as_array()
            .into_iter()
            .flatten()
            .collect();
        if !finalizers.iter().any(|f| f.as_str() == Some(finalizer)) {
            return Ok(());
        }
        let rest: Vec<&Value> = finalizers
            .into_iter()
            .filter(|f| f.as_str() != Some(finalizer))
            .collect();
        let rest = if rest.is_empty() {
            Value::Null
        } else {
            json!(rest)
        };
        self.patch_metadata(item, &latest, json!({"finalizers": rest}))
            .await?;
        tracing::info!(object = %item.path(), finalizer, "finalizer removed");
        Ok(())
    }

    /// `item` as it is now; `None` when it is gone or another object holds its name.
    async fn current(&self, item: &Node) -> Result<Option<Value>, ControllerError> {
        let latest = self.client.get(&item.path()).await?;
        Ok(latest.filter(|l| l["metadata"]["uid"].as_str() == Some(item.uid.as_str())))
    }

    /// Merge-patches `fields` into `item`'s metadata, conditional on `latest`'s
    /// `resourceVersion` and uid.
    async fn patch_metadata(
        &mut self,
        item: &Node,
        latest: &Value,
        mut fields: Value,
    ) -> Result<(), ControllerError> {
        fields["uid"] = json!(item.uid);
        fields["resourceVersion"] = latest["metadata"]["resourceVersion"].clone();
        self.spend();
        self.client
            .merge_patch(&item.path(), &json!({"metadata": fields}))
            .await
            .map(drop)
    }

    /// Reports, with a warning Event on `dependent`, that it is cluster scoped and names a
    /// namespaced owner (Kubernetes' `OwnerRefInvalidNamespace`). The Event's name is drawn
    /// from the pair, so a later pass finds it there and writes nothing.
    pub(super) async fn report_invalid_namespace(
        &mut self,
        dependent: &Node,
        reference: &OwnerRef,
    ) -> Result<(), ControllerError> {
        let namespace = if dependent.namespace.is_empty() {
            CLUSTER_EVENTS_NAMESPACE
        } else {
            &dependent.namespace
        };
        let digest = Sha256::digest(format!("{}/{}", dependent.uid, reference.uid));
        let suffix: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let name = format!("{}.{suffix}", dependent.name);
        let path = format!("/api/v1/namespaces/{namespace}/events");
        if self.client.get(&format!("{path}/{name}")).await?.is_some() {
            return Ok(());
        }
        let now = self.now.to_rfc3339_opts(SecondsFormat::Secs, true);
        let message = format!(
            "ownerRef [{}/{}, namespace: {}, name: {}, uid: {}] does not exist in namespace {:?}",
            reference.api_version,
            reference.kind,
            dependent.namespace,
            reference.name,
            reference.uid,
            dependent.namespace,
        );
        let event = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {
                "apiVersion": dependent.resource.api_version(),
                "kind": dependent.resource.kind,
                "name": dependent.name,
                "namespace": dependent.namespace,
                "uid": dependent.uid,
            },
            "reason": "OwnerRefInvalidNamespace",
            "message": message,
            "type": "Warning",
            "source": {"component": "garbage-collector-controller"},
            "reportingComponent": "garbage-collector-controller",
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        });
        self.spend();
        self.client.create(&path, &event).await
    }
}
