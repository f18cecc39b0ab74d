//! `MutatingAdmissionPolicy`: the mutating phase changes the object of every create, update
//! and connect by the MutatingAdmissionPolicies and their bindings
//! ([`crate::admission::policy::mutating`]).

use serde_json::Value;

use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Plugin;
use crate::admission::policy::mutating::MutatingDispatcher;
use crate::error::ApiError;

/// The plugin; without a dispatcher (the policy kinds not served) it changes nothing.
pub struct MutatingAdmissionPolicy {
    dispatcher: Option<MutatingDispatcher>,
}

impl MutatingAdmissionPolicy {
    /// The plugin mutating by `dispatcher`'s policies.
    pub fn new(dispatcher: Option<MutatingDispatcher>) -> Self {
        Self { dispatcher }
    }
}

#[async_trait::async_trait]
impl Plugin for MutatingAdmissionPolicy {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        match &self.dispatcher {
            Some(dispatcher) => dispatcher.admit(attributes, object, old, notes).await,
            None => Ok(()),
        }
    }
}
