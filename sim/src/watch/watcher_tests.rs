//! The watcher against scripted watch servers on simulated hosts: each stream ends after one
//! event (or falls silent), so the watcher must resume on the other replica from its last
//! revision; a stale start revision gets an `ERROR` 410 event, so it must list again.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::RawQuery;
use axum::routing::get;
use futures::StreamExt;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::*;
use crate::check::watch_guarantees;
use crate::client::SimClient;
use crate::client::configmaps_path;
use crate::history::History;
use crate::history::WriteOp;
use crate::history::WriteOutcome;
use crate::history::WriteRecord;
use crate::net::SimListener;
use crate::resource_api::API_PORT;
use crate::watch_history::WatchEntry;
use crate::watch_history::WatchLog;

/// The changes the fake replicas serve: creates of `a`.. at these revisions.
const REVISIONS: [u64; 4] = [3, 5, 7, 9];

fn key(revision: u64) -> String {
    let index = REVISIONS.iter().position(|r| *r == revision).unwrap_or(0);
    char::from(b'a' + u8::try_from(index).expect("few keys")).to_string()
}

fn event_line(revision: u64) -> String {
    let key = key(revision);
    format!(
        "{{\"type\":\"ADDED\",\"object\":{{\"metadata\":{{\"name\":\"{key}\",\"resourceVersion\":\"{revision}\"}},\"data\":{{\"value\":\"{key}\"}}}}}}\n"
    )
}

/// A fake replica: lists answer `lists[min(call, last)]`; a watch from below `compacted` gets
/// an ERROR 410 event; otherwise a bookmark at its start, then the first change after it, and
/// the stream ends (with `hold`: stays open and silent).
fn fake_replica(lists: &'static [u64], compacted: u64, hold: bool) -> Router {
    let calls = Arc::new(AtomicU32::new(0));
    Router::new().route(
        &configmaps_path(),
        get(move |RawQuery(query): RawQuery| {
            let calls = Arc::clone(&calls);
            async move {
                let query = query.unwrap_or_default();
                let from = query
                    .split('&')
                    .find_map(|pair| pair.strip_prefix("resourceVersion="))
                    .and_then(|rv| rv.parse::<u64>().ok());
                let Some(from) = from.filter(|_| query.contains("watch=1")) else {
                    let call = usize::try_from(calls.fetch_add(1, Ordering::SeqCst))
                        .expect("few calls");
                    let revision = lists[call.min(lists.len() - 1)];
                    return Body::from(format!(
                        "{{\"metadata\":{{\"resourceVersion\":\"{revision}\"}},\"items\":[]}}"
                    ));
                };
                if from < compacted {
                    return Body::from(
                        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n",
                    );
                }
                let bookmark = format!(
                    "{{\"type\":\"BOOKMARK\",\"object\":{{\"metadata\":{{\"resourceVersion\":\"{from}\"}}}}}}\n"
                );
                let next = REVISIONS.iter().find(|r| **r > from).map(|r| event_line(*r));
                // Slow enough that the watcher reads the bookmark alone first.
                let lines = futures::stream::iter([Some(bookmark), next])
                    .then(|line| async move {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Ok::<_, std::io::Error>(line.unwrap_or_default())
                    });
                if hold {
                    Body::from_stream(lines.chain(futures::stream::pending()))
                } else {
                    Body::from_stream(lines)
                }
            }
        }),
    )
}

/// Options with sessions of `session` on one replica and `away` after each deliberate switch.
fn options(session: Duration, away: Duration) -> WatcherOptions {
    WatcherOptions {
        idle: Duration::from_secs(1),
        min_session: session,
        max_session: session,
        open_deadline: Duration::from_secs(1),
        away,
    }
}

/// Runs one watcher with `options` over `replica-1` and `replica-2`, both serving `router()`,
/// until it has seen revision 9, and returns its log.
fn watch_fakes(router: fn() -> Router, options: WatcherOptions) -> WatchLog {
    let mut sim = turmoil::Builder::new().rng_seed(3).build();
    for host in ["replica-1", "replica-2"] {
        sim.host(host, move || async move {
            axum::serve(SimListener::bind(API_PORT).await?, router()).await?;
            Ok(())
        });
    }
    let log = Arc::new(std::sync::Mutex::new(None));
    let slot = Arc::clone(&log);
    sim.client("client", async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let client = SimClient::new(Duration::from_secs(1));
        let hosts = vec!["replica-1".to_owned(), "replica-2".to_owned()];
        let goal = WatchGoal::default();
        goal.set(9, Duration::from_secs(20));
        let watcher = Watcher::new(
            "w",
            &client,
            &hosts,
            options,
            goal,
            StdRng::seed_from_u64(1),
        );
        *slot.lock().expect("not poisoned") = Some(watcher.run().await);
        Ok(())
    });
    sim.run().expect("simulation failed");
    let log = log.lock().expect("not poisoned").take();
    log.expect("the watcher finished")
}

/// The log checked against the fake replicas' changes.
fn checked(log: WatchLog) -> History {
    let mut history = History::default();
    for revision in REVISIONS {
        let key = key(revision);
        history.record_write(WriteRecord {
            op: WriteOp::Create,
            value: key.clone().into(),
            key,
            replica: "replica-1".to_owned(),
            sent_at: Duration::ZERO,
            done_at: Duration::ZERO,
            outcome: WriteOutcome::Acked {
                revision: Some(revision),
            },
        });
    }
    history.watches = vec![log];
    assert_eq!(watch_guarantees(&history), vec![]);
    history
}

/// Sessions longer than the tests, so every switch is the server's doing.
fn long_sessions() -> WatcherOptions {
    options(Duration::from_secs(5), Duration::ZERO)
}

fn opened(log: &WatchLog) -> Vec<(String, u64)> {
    log.entries
        .iter()
        .filter_map(|entry| match entry {
            WatchEntry::Opened { replica, from, .. } => Some((replica.clone(), *from)),
            _ => None,
        })
        .collect()
}

// R-RES-175, R-HA-010: every stream ends after one change; the watcher resumes on the other
// replica from the last revision it saw, and so gets every change once, in order.
#[test]
fn resumes_on_the_other_replica_from_the_last_revision() {
    let history = checked(watch_fakes(
        || fake_replica(&[2], 0, false),
        long_sessions(),
    ));
    let log = &history.watches[0];
    assert_eq!(log.events(), 4, "{log:#?}");
    let opened = opened(log);
    let froms: Vec<u64> = opened.iter().map(|(_, from)| *from).collect();
    assert_eq!(froms, [2, 3, 5, 7], "{log:#?}");
    assert!(
        opened.windows(2).all(|pair| pair[0].0 != pair[1].0),
        "every resume switches replicas: {opened:?}"
    );
}

// R-RES-175: a start revision the replica no longer has (ERROR 410) makes the watcher list
// again and watch from the new list's revision.
#[test]
fn lists_again_after_an_error_410() {
    let history = checked(watch_fakes(
        || fake_replica(&[2, 5], 5, false),
        long_sessions(),
    ));
    let log = &history.watches[0];
    let gone = log
        .entries
        .iter()
        .filter(|e| matches!(e, WatchEntry::Gone { .. }))
        .count();
    assert_eq!(gone, 1, "{log:#?}");
    let froms: Vec<u64> = opened(log).iter().map(|(_, from)| *from).collect();
    assert_eq!(froms, [2, 5, 7], "{log:#?}");
    assert_eq!(log.events(), 2, "{log:#?}");
}

// R-RES-175: after a deliberate switch (its stream silent but open) the watcher stays away as
// long as asked, as a paused client would, then resumes on the other replica from its last
// revision; the relist scenario relies on this to outlive the history.
#[test]
fn stays_away_after_a_deliberate_switch() {
    let away = Duration::from_secs(2);
    let history = checked(watch_fakes(
        || fake_replica(&[2], 0, true),
        options(Duration::from_millis(300), away),
    ));
    let log = &history.watches[0];
    let mut switched_at = None;
    let mut gaps = Vec::new();
    for entry in &log.entries {
        match entry {
            WatchEntry::Closed { reason, at } if reason.starts_with("switching replicas") => {
                switched_at = Some(*at);
            }
            WatchEntry::Opened { at, .. } => gaps.extend(switched_at.take().map(|s| *at - s)),
            _ => {}
        }
    }
    assert_eq!(gaps.len(), 3, "{log:#?}");
    assert!(gaps.iter().all(|gap| *gap >= away), "{gaps:?}");
    let froms: Vec<u64> = opened(log).iter().map(|(_, from)| *from).collect();
    assert_eq!(froms, [2, 3, 5, 7], "{log:#?}");
}
