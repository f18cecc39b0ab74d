//! [`TraceDigest`]: a hash of every event the replicas (and openraft) log during a run, each
//! stamped with the virtual time it happened at. Two runs of one seed that are bit-exact have
//! equal digests (R-HA-013); any difference in who did what when changes it.

use std::cell::Cell;
use std::fmt;
use std::hash::DefaultHasher;
use std::hash::Hash;
use std::hash::Hasher;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use tracing::Event;
use tracing::Level;
use tracing::Subscriber;
use tracing::field::Field;
use tracing::field::Visit;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::Context;
use tracing_subscriber::layer::SubscriberExt;

use crate::client::now;

/// How many events a run logged, and a hash of them all in order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceDigest {
    /// Events hashed.
    pub events: u64,
    /// The hash of every event's virtual time, level, target, source line and fields.
    pub hash: u64,
}

impl fmt::Display for TraceDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} events, hash {:016x}", self.events, self.hash)
    }
}

thread_local! {
    /// The simulation's time while the driver works between two steps (see [`between_steps`]).
    static BETWEEN_STEPS: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// Runs `work` (crashing or restarting hosts) between two steps of a simulation at virtual time
/// `at`, stamping what it logs with `at`. turmoil's per-host clock reads the wall clock outside
/// a step, so software dying in a crash would otherwise log at an irreproducible time.
pub fn between_steps<T>(at: Duration, work: impl FnOnce() -> T) -> T {
    let previous = BETWEEN_STEPS.with(|b| b.replace(Some(at)));
    let result = work();
    BETWEEN_STEPS.with(|b| b.set(previous));
    result
}

/// The virtual time to stamp an event with.
fn event_time() -> Duration {
    BETWEEN_STEPS.with(Cell::get).unwrap_or_else(now)
}

/// When set, [`record`] also writes every hashed event, one per line, to the file it names
/// (overwritten by each run), so that two runs can be compared with `diff`.
pub const TRACE_FILE_ENV: &str = "APIARY_SIM_TRACE_FILE";

/// Runs `run` on this thread with every debug-or-higher event of the replica code and openraft
/// hashed into a [`TraceDigest`]. Replaces this thread's log output while it runs.
pub fn record<T>(run: impl FnOnce() -> T) -> (T, TraceDigest) {
    record_into(std::env::var_os(TRACE_FILE_ENV).map(PathBuf::from), run)
}

/// [`record`], writing every hashed event, one per line, to `dump` (when given) instead of the
/// file [`TRACE_FILE_ENV`] names.
pub fn record_into<T>(dump: Option<PathBuf>, run: impl FnOnce() -> T) -> (T, TraceDigest) {
    let state = Arc::new(Mutex::new(Digest {
        lines: dump.as_ref().map(|_| Vec::new()),
        ..Digest::default()
    }));
    // `std`'s default hasher has fixed keys, so equal traces hash equally in every process.
    let layer = TraceLayer {
        state: Arc::clone(&state),
    }
    .with_filter(
        Targets::new()
            .with_target("openraft", Level::DEBUG)
            .with_target("apiary_raft", Level::DEBUG)
            .with_target("apiary_api", Level::DEBUG)
            .with_target("apiary_node", Level::DEBUG)
            .with_target("apiary_sim", Level::DEBUG),
    );
    let subscriber = tracing_subscriber::registry().with(layer);
    let result = tracing::subscriber::with_default(subscriber, run);
    let digest = state.lock().unwrap_or_else(PoisonError::into_inner);
    let trace = TraceDigest {
        events: digest.events,
        hash: digest.hasher.finish(),
    };
    if let (Some(path), Some(lines)) = (dump, &digest.lines) {
        let mut text = lines.join("\n");
        text.push('\n');
        if let Err(error) = std::fs::write(&path, text) {
            eprintln!("could not write the trace to {}: {error}", path.display());
        }
    }
    (result, trace)
}

#[derive(Default)]
struct Digest {
    events: u64,
    hasher: DefaultHasher,
    /// Every hashed line, kept only when [`TRACE_FILE_ENV`] asks for them.
    lines: Option<Vec<String>>,
}

struct TraceLayer {
    state: Arc<Mutex<Digest>>,
}

impl<S: Subscriber> Layer<S> for TraceLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let mut fields = FieldText(String::new());
        event.record(&mut fields);
        let mut digest = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        digest.events += 1;
        let line = format!(
            "{:?} {} {}:{} {}",
            event_time(),
            meta.level(),
            meta.target(),
            meta.line().unwrap_or(0),
            scrub_instants(&fields.0)
        );
        line.hash(&mut digest.hasher);
        if let Some(lines) = &mut digest.lines {
            lines.push(line);
        }
    }
}

/// `text` with the absolute instants openraft prints blanked out: `tokio::time::Instant`s
/// (`tv_sec: 3983, tv_nsec: 57897479`) and their time-of-day rendering (`06:10:28.664174`).
/// turmoil's clock starts at the real instant its runtime was built, so these differ between
/// runs even when every virtual duration is the same; the virtual time each event happened at
/// is hashed separately.
fn scrub_instants(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let skip = instant_field_len(&bytes[i..]).or_else(|| {
            let starts_number = i == 0 || !bytes[i - 1].is_ascii_digit();
            starts_number
                .then(|| time_of_day_len(&bytes[i..]))
                .flatten()
        });
        match skip {
            Some((keep, len)) => {
                out.push_str(&text[copied..i + keep]);
                out.push('_');
                i += len;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// At `tv_sec: 123` or `tv_nsec: 123`: how much to keep (the name) and how long the match is.
fn instant_field_len(bytes: &[u8]) -> Option<(usize, usize)> {
    ["tv_sec: ", "tv_nsec: "].iter().find_map(|name| {
        let digits = bytes.strip_prefix(name.as_bytes())?;
        let count = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        (count > 0).then_some((name.len(), name.len() + count))
    })
}

/// At `hh:mm:ss.fraction`: nothing to keep, and the match's length.
fn time_of_day_len(bytes: &[u8]) -> Option<(usize, usize)> {
    let pattern = b"dd:dd:dd.d";
    if bytes.len() < pattern.len() {
        return None;
    }
    let matches = pattern.iter().zip(bytes).all(|(p, b)| match p {
        b'd' => b.is_ascii_digit(),
        _ => p == b,
    });
    if !matches {
        return None;
    }
    let fraction = bytes[pattern.len()..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    Some((0, pattern.len() + fraction))
}

/// An event's fields as `name=value` text.
struct FieldText(String);

impl Visit for FieldText {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

#[cfg(test)]
mod tests {
    use super::scrub_instants;

    // R-HA-013: absolute instants are blanked, everything else (terms, indexes, durations) kept.
    #[test]
    fn scrubs_absolute_instants_only() {
        let line = "vote T1-N2@06:10:28.664174 last_update: Some(TokioInstant(Instant { tv_sec: \
                    3983, tv_nsec: 57897479 })), lease: 150ms, index 12:34";
        assert_eq!(
            scrub_instants(line),
            "vote T1-N2@_ last_update: Some(TokioInstant(Instant { tv_sec: _, tv_nsec: _ })), \
             lease: 150ms, index 12:34"
        );
        assert_eq!(scrub_instants("term 123:45:67.8"), "term 123:45:67.8");
        assert_eq!(scrub_instants("é 01:02:03.4 é"), "é _ é");
    }
}
