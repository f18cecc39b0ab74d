//! `ValidatingAdmissionPolicy`: the validating phase judges every write by the
//! ValidatingAdmissionPolicies and their bindings ([`crate::admission::policy`]).

use serde_json::Value;

use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Plugin;
use crate::admission::policy::Dispatcher;
use crate::error::ApiError;

/// The plugin; without a dispatcher (the policy kinds not served) it lets everything pass.
pub struct ValidatingAdmissionPolicy {
    dispatcher: Option<Dispatcher>,
}

impl ValidatingAdmissionPolicy {
    /// The plugin judging by `dispatcher`'s policies.
    pub fn new(dispatcher: Option<Dispatcher>) -> Self {
        Self { dispatcher }
    }
}

#[async_trait::async_trait]
impl Plugin for ValidatingAdmissionPolicy {
    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        match &self.dispatcher {
            Some(dispatcher) => dispatcher.validate(attributes, object, old, notes).await,
            None => Ok(()),
        }
    }
}
