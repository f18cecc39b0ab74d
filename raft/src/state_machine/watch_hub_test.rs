//! Unit tests of the per-prefix dispatch of apply notices to watches (R-HA-010).

use bytes::Bytes;
use futures::FutureExt;

use super::*;
use crate::command::Command;
use crate::command::Op;
use crate::command::Txn;
use crate::state_machine::SharedState;

fn put_all(shared: &SharedState, revision: Revision, keys: &[&str]) {
    let txn = Txn {
        success: keys
            .iter()
            .map(|k| Op::put(*k, Bytes::from_static(b"v")))
            .collect(),
        ..Default::default()
    };
    shared
        .apply(revision, Some(&Command::txn(txn)))
        .expect("in order");
}

/// The revisions queued for `watch` (and whether it was told it lagged), draining its queue.
fn drain(watch: &Registration) -> (Vec<Revision>, bool) {
    let mut revisions = Vec::new();
    let mut lagged = false;
    while let Some(received) = watch.try_next() {
        match received {
            Received::Notice(notice) => match notice.as_ref() {
                ApplyNotice::Applied { revision, .. } => revisions.push(*revision),
                other => panic!("unexpected notice {other:?}"),
            },
            Received::Lagged => lagged = true,
        }
    }
    (revisions, lagged)
}

/// Whether `watch` was woken since its queue was last found empty.
fn woken(watch: &Registration) -> bool {
    watch.queued().now_or_never().is_some()
}

#[test]
fn a_revision_wakes_only_the_watches_a_key_is_under() {
    let shared = SharedState::new();
    let concerned = ["", "/", "/p", "/p/", "/p/a", "/p/a/"]
        .map(|prefix| (prefix, shared.register_watch(prefix)));
    let unconcerned =
        ["/q/", "/p/ab", "/p/b/", "/pq", "q"].map(|prefix| (prefix, shared.register_watch(prefix)));
    put_all(&shared, 1, &["/p/a/x"]);
    for (prefix, watch) in &concerned {
        assert!(woken(watch), "{prefix:?} woken");
        assert_eq!(drain(watch), (vec![1], false), "{prefix:?}");
    }
    for (prefix, watch) in &unconcerned {
        assert!(!woken(watch), "{prefix:?} not woken");
        assert_eq!(drain(watch), (vec![], false), "{prefix:?}");
    }
}

#[test]
fn a_transaction_with_several_keys_under_a_prefix_is_queued_once() {
    let shared = SharedState::new();
    let watch = shared.register_watch("/p/");
    put_all(&shared, 1, &["/p/a", "/q/a", "/p/b"]);
    put_all(&shared, 2, &["/p/c"]);
    assert_eq!(drain(&watch), (vec![1, 2], false));
}

#[test]
fn many_watches_on_one_prefix_each_get_every_revision() {
    let shared = SharedState::new();
    let watches: Vec<_> = (0..1000).map(|_| shared.register_watch("/p/")).collect();
    let other = shared.register_watch("/q/");
    for revision in 1..=5 {
        put_all(&shared, revision, &["/p/a"]);
    }
    for watch in &watches {
        assert_eq!(drain(watch), (vec![1, 2, 3, 4, 5], false));
    }
    assert!(!woken(&other));
}

#[test]
fn an_overflowing_watch_is_told_it_lagged_and_the_others_are_not() {
    let shared = SharedState::new();
    let sleeper = shared.register_watch("/p/");
    let reader = shared.register_watch("/p/");
    let total = QUEUE_CAPACITY as Revision + 10;
    let mut read = Vec::new();
    for revision in 1..=total {
        put_all(&shared, revision, &["/p/a"]);
        let (revisions, lagged) = drain(&reader);
        assert!(!lagged);
        read.extend(revisions);
    }
    assert_eq!(read, (1..=total).collect::<Vec<_>>());
    // The sleeper's queue was dropped when it overflowed; only later notices are queued.
    let (revisions, lagged) = drain(&sleeper);
    assert!(lagged);
    assert!(revisions.len() < 10, "{revisions:?}");
    assert!(revisions.iter().all(|r| *r > QUEUE_CAPACITY as Revision));
}

#[test]
fn a_restore_tells_every_watch_to_catch_up() {
    let shared = SharedState::new();
    let watches = ["/p/", "/q/", "x", ""].map(|prefix| shared.register_watch(prefix));
    put_all(&shared, 1, &["/p/a"]);
    shared.publish(5, Some(ApplyNotice::Restored { revision: 5 }));
    for watch in &watches {
        assert!(woken(watch));
        let (revisions, lagged) = drain(watch);
        assert!(lagged);
        assert!(revisions.is_empty());
    }
}

#[test]
fn compactions_wake_no_watch() {
    let shared = SharedState::new();
    let watch = shared.register_watch("/p/");
    put_all(&shared, 1, &["/p/a"]);
    assert!(woken(&watch));
    drain(&watch);
    shared
        .apply(2, Some(&Command::compact(1)))
        .expect("in order");
    assert!(!woken(&watch));
}

#[test]
fn a_dropped_watch_leaves_the_hub() {
    let shared = SharedState::new();
    let first = shared.register_watch("/p/");
    let second = shared.register_watch("/p/");
    let third = shared.register_watch("/q/x");
    assert_eq!(shared.watch_count(), 3);
    drop(first);
    drop(third);
    assert_eq!(shared.watch_count(), 1);
    put_all(&shared, 1, &["/p/a"]);
    assert_eq!(drain(&second), (vec![1], false));
    drop(second);
    assert_eq!(shared.watch_count(), 0);
}
