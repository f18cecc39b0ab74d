//! One problem the decoder found in a body that decoding itself tolerates: a field the schema
//! does not have, or a field given twice in one object.

use std::fmt;

/// A tolerated problem in a body, with the field's path as Kubernetes prints it
/// (`spec.template.spec.containers[0].imagePullPolice`), as an excerpt (see
/// [`MAX_EXCERPT_BYTES`](super::MAX_EXCERPT_BYTES)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Finding {
    /// The field is not in the schema (R-RES-188); decoding drops it.
    Unknown(String),
    /// The field appears more than once in the same object (R-RES-189); the last one counts.
    Duplicate(String),
    /// A key given twice in one YAML mapping, on `line` (1-based); Kubernetes finds these
    /// while turning YAML into JSON, so they carry a line, not a path.
    YamlDuplicate {
        /// The line of the repeated key.
        line: u64,
        /// The key.
        key: String,
    },
}

impl fmt::Display for Finding {
    /// Kubernetes' wording: `unknown field "spec.foo"`, `duplicate field "metadata.name"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown(path) => write!(f, "unknown field \"{path}\""),
            Self::Duplicate(path) => write!(f, "duplicate field \"{path}\""),
            Self::YamlDuplicate { line, key } => {
                write!(f, "line {line}: key {key:?} already set in map")
            }
        }
    }
}
