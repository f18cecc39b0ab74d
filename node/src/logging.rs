//! The binary's log output: the events `RUST_LOG` selects (by default [`DEFAULT_LOG_FILTER`]),
//! to stderr, less openraft's warnings about single failed calls to a peer.
//!
//! openraft warns about every heartbeat and every replication attempt that fails: for one dead
//! peer, a leader logged hundreds of lines a second. The raft network reports the same failures
//! once per change instead (the peer stops answering, is still silent a minute later, answers
//! again: `apiary_raft::network`), so the warnings of the modules in
//! [`PER_CALL_FAILURE_TARGETS`] are dropped whatever `RUST_LOG` says; their debug events stay.

use std::io::IsTerminal;

use tracing::Level;
use tracing::Metadata;
use tracing::Subscriber;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Log filter when `RUST_LOG` is unset: openraft reports every vote and term change at info.
pub const DEFAULT_LOG_FILTER: &str = "info,openraft=warn";

/// openraft's modules whose warnings each report one failed call to a peer: the heartbeat
/// worker, the replication stream, and the leader's bookkeeping of replication progress.
const PER_CALL_FAILURE_TARGETS: [&str; 3] = [
    "openraft::core::heartbeat::worker",
    "openraft::replication",
    "openraft::engine::handler::replication_handler",
];

/// Installs the process's subscriber: `RUST_LOG` (else [`DEFAULT_LOG_FILTER`]) to stderr, with
/// colours only on a terminal (replica logs usually go to files, `apiary dev`).
pub fn init() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    subscriber(filter, std::io::stderr, std::io::stderr().is_terminal()).init();
}

/// The subscriber [`init`] installs, writing to `writer`.
fn subscriber<W>(filter: EnvFilter, writer: W, ansi: bool) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let output = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(ansi)
        .with_filter(filter_fn(|metadata| !is_per_call_failure(metadata)));
    tracing_subscriber::registry().with(filter).with(output)
}

/// Whether `metadata` is one of openraft's warnings about a single failed call to a peer.
fn is_per_call_failure(metadata: &Metadata<'_>) -> bool {
    *metadata.level() == Level::WARN && PER_CALL_FAILURE_TARGETS.contains(&metadata.target())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Arc;
    use std::sync::Mutex;

    use super::*;

    /// Collects what the subscriber writes.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn logged(filter: &str, log: impl FnOnce()) -> String {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = subscriber(EnvFilter::new(filter), move || writer.clone(), false);
        tracing::subscriber::with_default(subscriber, log);
        let bytes = buffer.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn openraft_per_call_failure_warnings_are_dropped_and_nothing_else() {
        let out = logged("debug", || {
            tracing::warn!(target: "openraft::core::heartbeat::worker", "heartbeat failed");
            tracing::warn!(target: "openraft::replication", "replication failed");
            tracing::warn!(
                target: "openraft::engine::handler::replication_handler",
                "update progress error"
            );
            tracing::debug!(target: "openraft::core::heartbeat::worker", "heartbeat detail");
            tracing::warn!(target: "openraft::core::raft_core", "vote failed");
            tracing::warn!(target: "apiary_raft::network::peer_health", "peer is unreachable");
            tracing::info!(
                target: "openraft::engine::handler::server_state_handler",
                "id=1 becomes leader"
            );
        });
        for dropped in [
            "heartbeat failed",
            "replication failed",
            "update progress error",
        ] {
            assert!(!out.contains(dropped), "{dropped} is dropped:\n{out}");
        }
        for kept in [
            "heartbeat detail",
            "vote failed",
            "peer is unreachable",
            "becomes leader",
        ] {
            assert!(out.contains(kept), "{kept} is kept:\n{out}");
        }
    }

    #[test]
    fn the_filter_still_decides_what_is_logged() {
        let out = logged(DEFAULT_LOG_FILTER, || {
            tracing::info!(target: "apiary_node::server", "replica started");
            tracing::info!(target: "openraft::core::raft_core", "vote detail");
            tracing::warn!(target: "openraft::core::raft_core", "vote failed");
        });
        assert!(out.contains("replica started"), "{out}");
        assert!(!out.contains("vote detail"), "{out}");
        assert!(out.contains("vote failed"), "{out}");
    }
}
