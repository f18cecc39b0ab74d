//! Log output for simulation runs: `RUST_LOG` filters as usual, and every line is stamped with
//! the simulation's virtual time instead of the wall clock, so that logs of two runs of one seed
//! line up.

use std::fmt;

use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

/// Stamps log lines with the virtual time since the simulation started.
#[derive(Debug, Clone, Copy, Default)]
pub struct VirtualTime;

impl FormatTime for VirtualTime {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        match turmoil::sim_elapsed() {
            Some(elapsed) => write!(w, "{:>10.3}s", elapsed.as_secs_f64()),
            None => write!(w, "{:>11}", "-"),
        }
    }
}

/// Installs a subscriber filtered by `RUST_LOG` (nothing when it is unset), writing through
/// the test harness's capture in tests and to stdout elsewhere; a no-op when a subscriber is
/// already installed.
pub fn init_logging() {
    let _already_installed = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_timer(VirtualTime)
        .with_ansi(false)
        .with_test_writer()
        .try_init();
}
