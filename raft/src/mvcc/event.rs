//! Change events: what one applied write did to one key, as a watch will see it.

use super::Revision;
use crate::command::KeyValue;

/// Whether a key was written or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The key was created or updated.
    Put,
    /// The key was deleted.
    Delete,
}

/// One change to one key at one revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// For a put, the new value; for a delete, the key with the deleting revision as its
    /// `mod_revision` and an empty value.
    pub kv: KeyValue,
    /// The value before this change, if the key existed.
    pub prev_kv: Option<KeyValue>,
}

impl Event {
    /// The revision at which the change happened.
    pub fn revision(&self) -> Revision {
        self.kv.mod_revision
    }
}
