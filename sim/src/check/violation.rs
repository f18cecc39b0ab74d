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
