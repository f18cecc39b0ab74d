//! The strategy of every built-in kind without rules of its own: the store's generic steps
//! (schema decode, metadata rules) and nothing else.

use crate::registry::Strategy;

/// A kind served with only the generic steps.
pub struct GenericStrategy {
    tracks_generation: bool,
}

impl GenericStrategy {
    /// A strategy that maintains `metadata.generation` when `tracks_generation`.
    pub fn new(tracks_generation: bool) -> Self {
        Self { tracks_generation }
    }
}

impl Strategy for GenericStrategy {
    fn tracks_generation(&self) -> bool {
        self.tracks_generation
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::rbac::v1::ClusterRole;

    use crate::flavor::Flavor;
    use crate::registry::builtin::row::kind;

    #[test]
    fn generation_is_tracked_for_kinds_with_status() {
        let cr = kind::<ClusterRole>().new_strategy(Flavor::Platform);
        assert!(!cr.tracks_generation(), "ClusterRole has no status");
        let d = kind::<Deployment>().status().new_strategy(Flavor::Platform);
        assert!(d.tracks_generation());
    }
}
