//! [`Violation`]: one broken guarantee, named, with the evidence.

use std::fmt;

/// A guarantee a run broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The guarantee's name (the checker's).
    pub guarantee: &'static str,
    /// What was observed, in words a reader of the failure can act on.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.guarantee, self.detail)
    }
}

/// Asserts that a checker found exactly one violation and that its detail mentions `needle`:
/// the shape of every "this broken history is caught" test.
#[cfg(test)]
pub(crate) fn assert_one_violation(violations: &[Violation], needle: &str) {
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(violations[0].detail.contains(needle), "{violations:?}");
}
