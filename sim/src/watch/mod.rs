//! Watching ConfigMaps over the simulated network: the watch stream's events decoded
//! ([`event`]) and a reflector-like [`Watcher`] that resumes across replicas and records a
//! [`crate::watch_history::WatchLog`].

mod event;
mod watcher;
#[cfg(test)]
mod watcher_tests;

pub use event::WatchLine;
pub use event::parse_watch_line;
pub use watcher::SERVER_ENDED;
pub use watcher::WatchGoal;
pub use watcher::Watcher;
pub use watcher::WatcherOptions;
