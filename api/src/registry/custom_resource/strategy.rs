//! The steps of a custom resource's writes (apiextensions' `customResourceStrategy`): with a
//! `status` subresource, a create sets no status and a main-resource update keeps it (the
//! store does that for every kind with `status`); the generation moves when anything
//! outside `metadata` changes; names follow the DNS subdomain rule.

use serde_json::Value;

use crate::registry::Strategy;

/// The strategy of one served version of a custom kind.
pub(super) struct CustomResourceStrategy {
    /// Whether the version serves the `status` subresource.
    pub status: bool,
}

impl Strategy for CustomResourceStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if self.status
            && let Value::Object(m) = obj
        {
            m.remove("status");
        }
    }
}
