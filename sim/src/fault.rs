//! Host faults a client asks for mid-run (also a new replica host joining). turmoil crashes, restarts and adds a host only from outside
//! the simulation (`Sim::crash`, `Sim::bounce` need the `Sim`, as does a link's latency), while a scenario's client runs
//! inside it; so the client queues the fault in [`Faults`] and the driver loop applies it between
//! two steps (see [`crate::scenario`]). Network faults need no queue: `turmoil::partition` and
//! friends work from inside.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use apiary_raft::typ::NodeId;

/// A fault on one host's software.
#[derive(Debug, Clone, PartialEq)]
pub enum HostFault {
    /// Stop the host's software at once, as a power loss: its tasks are dropped mid-flight,
    /// its sockets go away, and its [`crate::disk::SimDisk`] keeps only what was synced.
    Crash(String),
    /// Start the host's software again (after a crash), on the same disk.
    Restart(String),
    /// Replace the (crashed) host's data directory by the restore of `backup` (an
    /// `apiary snapshot save` file) for the new cluster of `members`, as
    /// `apiary snapshot restore` writes it; restart the host afterwards.
    Restore {
        /// The host.
        host: String,
        /// The backup file.
        backup: BackupFile,
        /// Every member of the restored cluster.
        members: Vec<NodeId>,
        /// `--revision-floor`: the restored cluster continues above at least this.
        revision_floor: u64,
    },
    /// Add host `replica-<id>` on a fresh disk, its replica asking `members` to admit it
    /// (`join_existing`): a membership change, as an operator starts a new replica.
    Join {
        /// The new replica's id, above every id used before.
        id: NodeId,
        /// Members to ask (the joiner follows their redirects to the leader).
        members: Vec<NodeId>,
    },
    /// Draw the latency of every message between the host and any other host from 1 ms up to
    /// `max` (turmoil's per-link latency, settable only from outside the simulation).
    Latency {
        /// The host whose links change.
        host: String,
        /// The new upper bound of one message's latency.
        max: Duration,
    },
    /// Lose messages between the host and any other host: every message sent on one of its
    /// links breaks the link with probability `rate`, dropping it and every message in flight
    /// on that link, and the link's next message repairs it (turmoil's message loss; over TCP
    /// a lost message breaks the connection, as turmoil does not resend). `0.0` ends the loss.
    Loss {
        /// The host whose links lose messages.
        host: String,
        /// The probability that one message breaks its link.
        rate: f64,
    },
    /// Set the host's wall clock (what the resource API stamps into objects) `offset` away
    /// from the simulation's; `TimeDelta::zero()` ends the skew.
    ClockSkew {
        /// The host whose clock is skewed.
        host: String,
        /// How far its clock is ahead (negative: behind).
        offset: chrono::TimeDelta,
    },
    /// From the host's next start on, its software speaks peer protocols up to `newest`: a
    /// replica replaced by a build of another version, as configuration of the same code.
    Protocol {
        /// The host whose software changes.
        host: String,
        /// The newest protocol it speaks.
        newest: u32,
    },
}

/// A backup file's bytes; shown by its size in logs.
#[derive(Clone, PartialEq)]
pub struct BackupFile(pub bytes::Bytes);

impl std::fmt::Debug for BackupFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BackupFile({} bytes)", self.0.len())
    }
}

/// The queue between a scenario's client and the driver loop. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    queue: Rc<RefCell<VecDeque<HostFault>>>,
}

impl Faults {
    /// Queues `fault` and waits one tick, by the end of which the driver loop has applied it.
    pub async fn inject(&self, fault: HostFault) {
        tracing::info!(?fault, "injecting");
        self.queue.borrow_mut().push_back(fault);
        // The driver applies queued faults after every step; a step is one tick (1 ms).
        tokio::time::sleep(Duration::from_millis(2)).await;
    }

    /// Takes every queued fault, oldest first.
    pub fn drain(&self) -> Vec<HostFault> {
        self.queue.borrow_mut().drain(..).collect()
    }
}
