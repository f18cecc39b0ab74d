//! What one admission remembers of its mutating webhooks between the first pass and the
//! reinvocation pass (Kubernetes' `webhookReinvokeContext`): which `IfNeeded` webhooks were
//! called before a later mutation, and the object as the webhooks last left it.

use std::collections::BTreeSet;

use serde_json::Value;

/// The mutating webhooks' memory of one admission.
#[derive(Debug, Default)]
pub struct Reinvocation {
    /// `IfNeeded` webhooks called since the last mutation.
    invoked: BTreeSet<String>,
    /// Webhooks to call again on the reinvocation pass.
    reinvoke: BTreeSet<String>,
    /// The object after the webhooks' last pass.
    last_output: Option<Value>,
}

impl Reinvocation {
    /// An `IfNeeded` webhook was called.
    pub fn invoked(&mut self, uid: &str) {
        self.invoked.insert(uid.to_owned());
    }

    /// The object changed: every `IfNeeded` webhook called before is to be called again.
    pub fn changed(&mut self) {
        self.reinvoke.append(&mut self.invoked);
    }

    /// Whether the reinvocation pass calls webhook `uid`.
    pub fn reinvokes(&self, uid: &str) -> bool {
        self.reinvoke.contains(uid)
    }

    /// Records the object as the webhooks left it.
    pub fn left(&mut self, object: Option<&Value>) {
        self.last_output = object.cloned();
    }

    /// Whether another plugin changed `object` since the webhooks left it.
    pub fn changed_since(&self, object: Option<&Value>) -> bool {
        self.last_output.as_ref() != object
    }
}
