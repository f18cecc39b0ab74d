//! One admission plugin and what it leaves beside its verdict.

use serde_json::Value;

use super::Attributes;
use crate::error::ApiError;

/// What the plugins of one admission add to the answer: `Warning` headers. (Audit
/// annotations go straight to the request's audit event: [`crate::audit::annotate`].)
#[derive(Debug, Default)]
pub struct Notes {
    /// One text per warning, in the order the plugins gave them.
    pub warnings: Vec<String>,
    /// Set by a mutating plugin whose earlier calls must be made again because a later
    /// plugin changed the object (`reinvocationPolicy: IfNeeded`): the chain runs the
    /// mutating plugins once more, with [`Notes::reinvoking`] set.
    pub reinvoke: bool,
    /// Whether this is the second mutating pass.
    pub reinvoking: bool,
    /// What the mutating webhooks remember between the passes.
    pub webhooks: super::webhook::Reinvocation,
    /// What the MutatingAdmissionPolicy plugin remembers between the passes.
    pub policies: super::policy::mutating::Reinvocation,
    /// A webhook's patch or a policy's mutation changed the object: the store applies the
    /// kind's defaults to it again (as Kubernetes decodes a patched object with its defaults).
    pub patched: bool,
}

/// An admission plugin: Kubernetes' `admission.MutationInterface` and
/// `admission.ValidationInterface` in one trait; a plugin implements either or both.
///
/// ### Correctness requirements
/// - Decide from the attributes, the objects and what the plugin reads; never write to the
///   store from `admit` or `validate` (a dry run must leave nothing behind).
/// - `admit` may change only `object`; `validate` changes nothing.
/// - Refuse with the error Kubernetes answers (usually 403 Forbidden naming the plugin's
///   reason, or 422 Invalid with causes); an internal failure is a 500, never a panic.
/// - Hold no lock across an `.await`; every call out of the replica is bounded in time.
#[async_trait::async_trait]
pub trait Plugin: Send + Sync + 'static {
    /// The mutating phase: change `object` (`None` on a delete or connect). `old` is the
    /// current object on an update or delete.
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let _ = (attributes, object, old, notes);
        Ok(())
    }

    /// The validating phase: refuse the write or let it pass, on the object as it will be
    /// stored.
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let _ = (attributes, object, old, notes);
        Ok(())
    }
}
