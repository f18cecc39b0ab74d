//! The store's admission step (crate::admission): the writes a request makes pass the
//! server's admission chain, mutating after the strategy's defaults and the managed-fields
//! record, validating after the strategy's validation (Kubernetes' order). Writes the server
//! makes outside any request (bootstrap) are not admitted, as kube-apiserver's are not.

use std::sync::Arc;

use serde_json::Value;

use super::Store;
use super::WriteOptions;
use crate::admission::Admission;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::ObjectKind;
use crate::admission::Operation;
use crate::auth::Requester;
use crate::error::ApiError;
use crate::patch::Shape;
use crate::registry::DeleteOptions;

/// The write admitted, less the objects and the user.
#[derive(Clone, Copy)]
pub(super) struct AdmittedWrite<'a> {
    pub operation: Operation,
    pub namespace: &'a str,
    pub name: &'a str,
    pub subresource: &'a str,
    pub dry_run: bool,
    pub field_manager: Option<&'a str>,
    pub force: bool,
    pub delete: Option<&'a DeleteOptions>,
    /// Admission already ran for this request ([`WriteOptions::admitted`]).
    pub admitted: bool,
}

impl<'a> AdmittedWrite<'a> {
    /// A create or update of `namespace`/`name` (`subresource`) with `write`'s options.
    pub fn of(
        operation: Operation,
        (namespace, name, subresource): (&'a str, &'a str, &'a str),
        write: &'a WriteOptions,
    ) -> Self {
        Self {
            operation,
            namespace,
            name,
            subresource,
            dry_run: write.dry_run,
            field_manager: write.manager.as_ref().map(|m| m.name.as_str()),
            force: write.force,
            delete: None,
            admitted: write.admitted,
        }
    }

    /// A delete of `namespace`/`name` with `options`; `admitted` as [`WriteOptions::admitted`].
    pub fn delete(
        namespace: &'a str,
        name: &'a str,
        options: &'a DeleteOptions,
        admitted: bool,
    ) -> Self {
        Self {
            operation: Operation::Delete,
            namespace,
            name,
            subresource: "",
            dry_run: options.dry_run,
            field_manager: None,
            force: false,
            delete: Some(options),
            admitted,
        }
    }
}

/// A write to a subresource with an object of its own ([`Store::admit_subresource`]).
#[derive(Clone, Copy)]
pub struct SubresourceWrite<'a> {
    /// CREATE (binding, eviction, token) or UPDATE (scale).
    pub operation: Operation,
    /// The parent's namespace.
    pub namespace: &'a str,
    /// The parent's name.
    pub name: &'a str,
    /// The subresource.
    pub subresource: &'a str,
    /// The subresource object's kind.
    pub kind: ObjectKind<'a>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

impl Store {
    /// The store, admitting the writes of requests through `admission` (and so does the
    /// store of the version it shares storage with). Creates check their namespace is open
    /// only when `admission` runs `NamespaceLifecycle`.
    pub fn with_admission(mut self, admission: Arc<Admission>) -> Self {
        self.set_admission(admission);
        self
    }

    pub(super) fn set_admission(&mut self, admission: Arc<Admission>) {
        if let Some(shared) = &mut self.shared {
            shared.home.set_admission(admission.clone());
        }
        self.namespace_lifecycle = admission.runs(crate::admission::NAMESPACE_LIFECYCLE);
        self.admission = (!admission.is_empty()).then_some(admission);
    }

    /// The chain and the requester when `write` is to be admitted: a request's write, not
    /// admitted already, on a server with plugins.
    fn admitting(&self, write: AdmittedWrite<'_>) -> Option<(&Admission, Arc<Requester>)> {
        match (&self.admission, Requester::current(), write.admitted) {
            (Some(admission), Some(requester), false) => Some((admission, requester)),
            _ => None,
        }
    }

    /// The mutating pass over `object` (`None` on a delete); an object a webhook or a
    /// mutating policy changed gets the kind's defaults again.
    pub(super) async fn admit_mutating(
        &self,
        write: AdmittedWrite<'_>,
        mut object: Option<&mut Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some((admission, requester)) = self.admitting(write) else {
            return Ok(());
        };
        let schema = self.compiled_schema()?;
        let shape = self.apply_shape(schema.as_deref());
        let attributes = self.attributes(write, &requester, shape);
        admission
            .mutate(&attributes, object.as_deref_mut(), old, notes)
            .await?;
        if let (true, Some(object)) = (notes.patched, object) {
            self.strategy.default_fields(object);
        }
        Ok(())
    }

    /// The validating pass over `object` as it will be stored (`None` on a delete).
    pub(super) async fn admit_validating(
        &self,
        write: AdmittedWrite<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some((admission, requester)) = self.admitting(write) else {
            return Ok(());
        };
        let schema = self.compiled_schema()?;
        let shape = self.apply_shape(schema.as_deref());
        let attributes = self.attributes(write, &requester, shape);
        admission.validate(&attributes, object, old, notes).await
    }

    /// Admits a subresource's own object (`kind`: a Scale, a Binding, an Eviction, a
    /// TokenRequest) for `operation` on `namespace`/`name`/`subresource`: both passes, the
    /// mutating one changing `object`. Answers the plugins' warnings. The write to the parent
    /// that follows carries [`WriteOptions::admitted`].
    pub async fn admit_subresource(
        &self,
        write: SubresourceWrite<'_>,
        object: &mut Value,
        old: Option<&Value>,
    ) -> Result<Vec<String>, ApiError> {
        let (Some(admission), Some(requester)) = (&self.admission, Requester::current()) else {
            return Ok(Vec::new());
        };
        let options = WriteOptions {
            dry_run: write.dry_run,
            ..WriteOptions::default()
        };
        let target = (write.namespace, write.name, write.subresource);
        let mut attributes = self.attributes(
            AdmittedWrite::of(write.operation, target, &options),
            &requester,
            Shape::untyped(),
        );
        attributes.object_kind = Some(write.kind);
        let mut notes = Notes::default();
        admission
            .mutate(&attributes, Some(object), old, &mut notes)
            .await?;
        admission
            .validate(&attributes, Some(object), old, &mut notes)
            .await?;
        Ok(notes.warnings)
    }

    fn attributes<'a>(
        &'a self,
        write: AdmittedWrite<'a>,
        requester: &'a Requester,
        shape: Shape<'a>,
    ) -> Attributes<'a> {
        Attributes {
            operation: write.operation,
            resource: &self.resource,
            subresource: write.subresource,
            object_kind: None,
            namespace: write.namespace,
            name: write.name,
            user: &requester.user,
            dry_run: write.dry_run,
            field_manager: write.field_manager,
            force: write.force,
            delete: write.delete,
            shape,
        }
    }
}
