//! What the MutatingAdmissionPolicy plugin remembers between the two mutating passes of one
//! write (Kubernetes' policy reinvocation context): the policies with `reinvocationPolicy:
//! IfNeeded` already invoked, those to invoke again because the object changed after them,
//! and the object as the plugin last left it.

use std::collections::BTreeSet;

use serde_json::Value;

/// One invocation: policy, binding, and the param's namespace and name.
pub type InvocationKey = (String, String, Option<(String, String)>);

/// The plugin's memory of one write.
#[derive(Debug, Default)]
pub struct Reinvocation {
    last_output: Option<Value>,
    invoked: BTreeSet<InvocationKey>,
    to_reinvoke: BTreeSet<InvocationKey>,
}

impl Reinvocation {
    /// Whether `key` is to be invoked again in the reinvocation pass.
    pub fn should_reinvoke(&self, key: &InvocationKey) -> bool {
        self.to_reinvoke.contains(key)
    }

    /// Whether `object` differs from the object as the plugin last left it (a later plugin
    /// changed it).
    pub fn changed_since_last_pass(&self, object: &Value) -> bool {
        self.last_output.as_ref() != Some(object)
    }

    /// Remembers `object` as the plugin leaves it.
    pub fn leave(&mut self, object: &Value) {
        self.last_output = Some(object.clone());
    }

    /// Records the invocation of an `IfNeeded` policy.
    pub fn invoked(&mut self, key: InvocationKey) {
        self.invoked.insert(key);
    }

    /// The object changed: every `IfNeeded` invocation made so far is to be made again.
    pub fn require_reinvoking(&mut self) {
        let invoked = std::mem::take(&mut self.invoked);
        self.to_reinvoke.extend(invoked);
    }
}
