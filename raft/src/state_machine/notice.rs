//! What the state machine announces after each applied entry, for watch fan-out.

use crate::mvcc::Event;
use crate::mvcc::Revision;

/// One announcement of the apply stream, in revision order.
#[derive(Debug, Clone, PartialEq)]
pub enum ApplyNotice {
    /// A transaction was applied at `revision`; `events` are its changes in operation order
    /// (empty when the failure branch wrote nothing).
    Applied {
        /// The revision of the entry.
        revision: Revision,
        /// The changes, in operation order.
        events: Vec<Event>,
    },
    /// History before `revision` was compacted.
    Compacted {
        /// The new compaction point.
        revision: Revision,
    },
    /// A snapshot replaced the whole store, which is now at `revision`; a subscriber must
    /// resynchronise from the store because the events in between were not seen.
    Restored {
        /// The store's revision after the install.
        revision: Revision,
    },
}
