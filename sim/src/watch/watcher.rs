//! A watcher as a Kubernetes reflector behaves: list (quorum) once, then watch from the list's
//! revision; when a stream ends — silence past the idle timeout (a partition, a crashed
//! replica), the server closing it, an error, or a deliberate switch after a seeded time on one
//! replica — resume on another replica from the newest revision seen (event or bookmark);
//! when the replica says the revision is compacted (410), list again and watch from there.
//! A watcher may stay away for a while after each deliberate switch, as a paused client
//! would, so that it resumes from a revision the cluster may have compacted meanwhile.
//! Everything is recorded in a [`WatchLog`] for the watch checkers.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use apiary_node::error::error_chain;
use http::StatusCode;
use rand::Rng;
use rand::rngs::StdRng;

use crate::client::SimClient;
use crate::client::configmaps_path;
use crate::client::now;
use crate::cluster::api_url;
use crate::net::CallError;
use crate::net::LineError;
use crate::net::get_stream;
use crate::watch::event::WatchLine;
use crate::watch::event::parse_watch_line;
use crate::watch_history::WatchEntry;
use crate::watch_history::WatchLog;

/// Why a stream ended when the server ended it cleanly (its watch timeout passed).
pub const SERVER_ENDED: &str = "the server ended the stream";

/// Pause after a failed list or a stream that could not be opened, before the next replica.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// How a watcher paces itself.
#[derive(Debug, Clone)]
pub struct WatcherOptions {
    /// Silence after which a stream is presumed cut off. Longer than the replicas' bookmark
    /// interval, so that a healthy quiet stream is never taken for a dead one.
    pub idle: Duration,
    /// The shortest time on one replica before a deliberate switch.
    pub min_session: Duration,
    /// The longest time on one replica before a deliberate switch.
    pub max_session: Duration,
    /// Bound of a list, and of opening a stream (up to its status line).
    pub open_deadline: Duration,
    /// How long the watcher stays away after a deliberate switch before it resumes (zero:
    /// at once).
    pub away: Duration,
}

/// When watchers may stop: once they have seen every change up to a revision, or give up at a
/// virtual time. Unset, they watch on. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct WatchGoal(Rc<Cell<Option<Goal>>>);

#[derive(Debug, Clone, Copy)]
struct Goal {
    revision: u64,
    give_up_at: Duration,
}

impl WatchGoal {
    /// Lets watchers stop once they have seen up to `revision`, or after `bound` from now.
    pub fn set(&self, revision: u64, bound: Duration) {
        self.0.set(Some(Goal {
            revision,
            give_up_at: now() + bound,
        }));
    }

    /// Whether the goal is reached from `progress` (or given up).
    fn done(&self, progress: Option<u64>) -> bool {
        self.0.get().is_some_and(|goal| {
            progress.is_some_and(|p| p >= goal.revision) || now() > goal.give_up_at
        })
    }
}

/// How one stream ended.
enum StreamEnd {
    /// The start revision is compacted: list again.
    Gone,
    /// Anything else: resume on another replica.
    Closed {
        reason: String,
        /// How long to wait before the next attempt: [`RETRY_PAUSE`] after a stream that never
        /// opened, [`WatcherOptions::away`] after a deliberate switch, else nothing.
        pause: Duration,
    },
}

/// One watcher: its options, its replicas, its random choices and its log.
pub struct Watcher<'a> {
    client: &'a SimClient,
    replicas: &'a [String],
    options: WatcherOptions,
    goal: WatchGoal,
    rng: StdRng,
    log: WatchLog,
}

impl<'a> Watcher<'a> {
    /// A watcher called `name` over `replicas` (not empty), listing through `client`; `rng`
    /// draws its replicas and session lengths.
    pub fn new(
        name: &str,
        client: &'a SimClient,
        replicas: &'a [String],
        options: WatcherOptions,
        goal: WatchGoal,
        rng: StdRng,
    ) -> Self {
        Self {
            client,
            replicas,
            options,
            goal,
            rng,
            log: WatchLog::new(name),
        }
    }

    /// Watches until the goal is reached or given up, and returns what it saw.
    pub async fn run(mut self) -> WatchLog {
        let mut replica = self.rng.random_range(0..self.replicas.len());
        let mut must_list = true;
        while !self.goal.done(self.log.progress()) {
            let host = &self.replicas[replica];
            if must_list {
                match self.client.list_revision(host).await {
                    Ok(revision) => {
                        self.record(WatchEntry::Listed {
                            replica: host.clone(),
                            revision,
                            at: now(),
                        });
                        must_list = false;
                    }
                    Err(error) => {
                        self.record(WatchEntry::Closed {
                            reason: format!("listing on {host} failed: {}", error_chain(&error)),
                            at: now(),
                        });
                        replica = self.other_than(replica);
                        tokio::time::sleep(RETRY_PAUSE).await;
                        continue;
                    }
                }
            }
            match self.stream(host).await {
                StreamEnd::Gone => {
                    self.record(WatchEntry::Gone { at: now() });
                    must_list = true;
                }
                StreamEnd::Closed { reason, pause } => {
                    self.record(WatchEntry::Closed { reason, at: now() });
                    replica = self.other_than(replica);
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        }
        self.log
    }

    fn record(&mut self, entry: WatchEntry) {
        tracing::debug!(watcher = %self.log.watcher, ?entry, "watch");
        self.log.entries.push(entry);
    }

    /// A replica other than `current`, drawn at random.
    fn other_than(&mut self, current: usize) -> usize {
        let n = self.replicas.len();
        if n < 2 {
            return current;
        }
        (current + 1 + self.rng.random_range(0..n - 1)) % n
    }

    /// Opens one stream on `host` from the newest revision seen and records what it delivers
    /// until it ends.
    async fn stream(&mut self, host: &str) -> StreamEnd {
        let closed = |reason: String| StreamEnd::Closed {
            reason,
            pause: Duration::ZERO,
        };
        let Some(from) = self.log.progress() else {
            return StreamEnd::Gone;
        };
        let path = format!(
            "{}?watch=1&resourceVersion={from}&allowWatchBookmarks=true",
            configmaps_path()
        );
        self.record(WatchEntry::Opened {
            replica: host.to_owned(),
            from,
            at: now(),
        });
        let mut stream = match get_stream(&api_url(host), &path, self.options.open_deadline).await {
            Ok(stream) => stream,
            Err(CallError::Status { status, .. }) if status == StatusCode::GONE => {
                return StreamEnd::Gone;
            }
            Err(error) => {
                return StreamEnd::Closed {
                    reason: format!("opening failed: {}", error_chain(&error)),
                    pause: RETRY_PAUSE,
                };
            }
        };
        let session = self
            .rng
            .random_range(self.options.min_session..=self.options.max_session);
        let session_end = now() + session;
        loop {
            if self.goal.done(self.log.progress()) {
                return closed("goal reached".to_owned());
            }
            let left = session_end.saturating_sub(now());
            if left.is_zero() {
                let away = self.options.away;
                let reason = if away.is_zero() {
                    format!("switching replicas after {session:?}")
                } else {
                    format!("switching replicas after {session:?}, away for {away:?}")
                };
                return StreamEnd::Closed {
                    reason,
                    pause: away,
                };
            }
            let line = match stream.next_line(self.options.idle.min(left)).await {
                Ok(Some(line)) => line,
                Ok(None) => return closed(SERVER_ENDED.to_owned()),
                Err(LineError::Idle { .. }) if now() >= session_end => continue,
                Err(error) => return closed(error_chain(&error)),
            };
            if line.is_empty() {
                continue;
            }
            match parse_watch_line(&line) {
                Ok(WatchLine::Change(change)) => {
                    self.record(WatchEntry::Event { change, at: now() })
                }
                Ok(WatchLine::Bookmark(revision)) => self.record(WatchEntry::Bookmark {
                    revision,
                    at: now(),
                }),
                Ok(WatchLine::Gone) => return StreamEnd::Gone,
                Ok(WatchLine::Error(status)) => return closed(format!("ERROR event: {status}")),
                Err(malformed) => return closed(format!("malformed event: {malformed}")),
            }
        }
    }
}
