//! The store's changes as controllers wait for them: every applied revision, or only the
//! revisions that wrote what a controller's pass reads ([`Interest`]), so that a controller
//! whose pass reads namespaces is not woken, and does not list, at every ConfigMap a client
//! writes. One task per replica reads the apply notices and moves the receivers whose
//! interest a notice concerns; a replaced store or a lagging reader moves them all.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::Weak;

use apiary_api::registry::ObjectKey;
use apiary_raft::mvcc::Event;
use apiary_raft::mvcc::Revision;
use apiary_raft::state_machine::ApplyNotice;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

/// What a controller's pass reads: the objects of some resources (named by their plural, in
/// any group), each resource whole or only its objects of one name, and the writes of any
/// resource that a test of the write itself picks.
#[derive(Debug, Clone, Default)]
pub struct Interest {
    resources: Vec<(&'static str, Option<&'static str>)>,
    writes: Option<fn(&Event) -> bool>,
}

impl Interest {
    /// Every object of the resources `plurals`.
    pub fn resources(plurals: &[&'static str]) -> Self {
        Self {
            resources: plurals.iter().map(|p| (*p, None)).collect(),
            writes: None,
        }
    }

    /// Also the objects named `name` of the resource `plural` (in any namespace).
    pub fn and_named(mut self, plural: &'static str, name: &'static str) -> Self {
        self.resources.push((plural, Some(name)));
        self
    }

    /// Also every write, of any resource, for which `picks` holds.
    pub fn and_writes(mut self, picks: fn(&Event) -> bool) -> Self {
        self.writes = Some(picks);
        self
    }

    /// Whether the write `event` changed something the pass reads.
    pub fn covers(&self, event: &Event) -> bool {
        self.writes.is_some_and(|picks| picks(event))
            || ObjectKey::parse(&event.kv.key).is_some_and(|key| {
                (self.resources.iter())
                    .any(|(p, n)| *p == key.plural && n.is_none_or(|n| n == key.name))
            })
    }
}

/// The receivers of one replica's followed changes, each with its interest.
type Followers = Mutex<Vec<(Interest, watch::Sender<Revision>)>>;

/// The changes of the store, as controllers wait for them.
#[derive(Clone)]
pub struct Changes {
    applied: watch::Receiver<Revision>,
    followers: Option<Arc<Followers>>,
}

impl Changes {
    /// The changes whose only detail is the applied revision `applied`: a controller waiting
    /// for an interest is woken by every change.
    pub fn of_revisions(applied: watch::Receiver<Revision>) -> Self {
        Self {
            applied,
            followers: None,
        }
    }

    /// The changes of a replica whose applied revision is `applied` and whose apply stream
    /// is `notices`, followed by a task until the stream ends or these changes are dropped.
    pub fn follow(
        applied: watch::Receiver<Revision>,
        notices: broadcast::Receiver<Arc<ApplyNotice>>,
    ) -> Self {
        let followers = Arc::new(Followers::default());
        tokio::spawn(dispatch(Arc::downgrade(&followers), notices));
        Self {
            applied,
            followers: Some(followers),
        }
    }

    /// A receiver that moves at every applied revision.
    pub fn all(&self) -> watch::Receiver<Revision> {
        self.applied.clone()
    }

    /// A receiver that moves at the revisions that wrote something `interest` covers, and
    /// whenever what was written cannot be known (the store was replaced, notices were lost).
    pub fn of(&self, interest: Interest) -> watch::Receiver<Revision> {
        let Some(followers) = &self.followers else {
            return self.all();
        };
        let (sender, receiver) = watch::channel(*self.applied.borrow());
        lock(followers).push((interest, sender));
        receiver
    }
}

/// Moves the followers' receivers as the notices say, until the notices end or the
/// followers are dropped; receivers dropped meanwhile are forgotten.
async fn dispatch(followers: Weak<Followers>, mut notices: broadcast::Receiver<Arc<ApplyNotice>>) {
    loop {
        let notice = notices.recv().await;
        let Some(followers) = followers.upgrade() else {
            return;
        };
        let mut followers = lock(&followers);
        followers.retain(|(_, sender)| !sender.is_closed());
        match notice {
            Ok(notice) => match notice.as_ref() {
                ApplyNotice::Applied { revision, events } => {
                    for (interest, sender) in followers.iter() {
                        if events.iter().any(|e| interest.covers(e)) {
                            sender.send_replace(*revision);
                        }
                    }
                }
                ApplyNotice::Restored { revision } => {
                    for (_, sender) in followers.iter() {
                        sender.send_replace(*revision);
                    }
                }
                ApplyNotice::Compacted { .. } => {}
            },
            Err(RecvError::Lagged(_)) => {
                for (_, sender) in followers.iter() {
                    sender.send_modify(|_| {});
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}

fn lock(followers: &Followers) -> MutexGuard<'_, Vec<(Interest, watch::Sender<Revision>)>> {
    followers
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use apiary_raft::command::KeyValue;
    use apiary_raft::mvcc::EventKind;

    use super::*;

    fn put(key: &str) -> Event {
        Event {
            kind: EventKind::Put,
            kv: KeyValue {
                key: key.to_owned(),
                ..KeyValue::default()
            },
            prev_kv: None,
        }
    }

    #[test]
    fn an_interest_covers_its_resources_and_names() {
        let interest = Interest::resources(&["namespaces"]).and_named("configmaps", "root.crt");
        let covers = |key| interest.covers(&put(key));
        assert!(covers("/registry/core/namespaces/ns"));
        assert!(covers("/registry/core/configmaps/ns/root.crt"));
        assert!(!covers("/registry/core/configmaps/ns/other"));
        assert!(!covers("/registry/core/secrets/ns/root.crt"));
        assert!(!covers("/registry/core/namespaces"));
        assert!(!covers("/other/core/namespaces/ns"));
    }

    #[test]
    fn an_interest_covers_the_writes_it_picks_in_any_resource() {
        let interest = Interest::resources(&["namespaces"])
            .and_writes(|event| event.kind == EventKind::Delete);
        let mut delete = put("/registry/core/secrets/ns/s");
        delete.kind = EventKind::Delete;
        assert!(interest.covers(&delete));
        assert!(!interest.covers(&put("/registry/core/secrets/ns/s")));
        assert!(interest.covers(&put("/registry/core/namespaces/ns")));
    }

    #[tokio::test]
    async fn a_receiver_moves_only_for_what_it_covers() {
        let (applied_tx, applied) = watch::channel(0);
        let (notices_tx, notices) = broadcast::channel(16);
        let changes = Changes::follow(applied, notices);
        let mut namespaces = changes.of(Interest::resources(&["namespaces"]));
        let all = changes.all();
        let applied = |revision, key: &str| {
            Arc::new(ApplyNotice::Applied {
                revision,
                events: vec![put(key)],
            })
        };
        notices_tx
            .send(applied(2, "/registry/core/configmaps/ns/a"))
            .expect("followed");
        applied_tx.send_replace(2);
        notices_tx
            .send(applied(3, "/registry/core/namespaces/ns"))
            .expect("followed");
        applied_tx.send_replace(3);
        let moved = tokio::time::timeout(Duration::from_secs(5), namespaces.changed()).await;
        assert!(moved.is_ok_and(|r| r.is_ok()));
        assert_eq!(
            *namespaces.borrow_and_update(),
            3,
            "the ConfigMap did not move it"
        );
        assert!(all.has_changed().expect("open"));

        notices_tx
            .send(Arc::new(ApplyNotice::Restored { revision: 9 }))
            .expect("followed");
        let moved = tokio::time::timeout(Duration::from_secs(5), namespaces.changed()).await;
        assert!(moved.is_ok_and(|r| r.is_ok()));
        assert_eq!(
            *namespaces.borrow(),
            9,
            "a replaced store moves every receiver"
        );
    }

    #[test]
    fn without_notices_every_change_counts() {
        let (applied_tx, applied) = watch::channel(0);
        let changes = Changes::of_revisions(applied);
        let mut namespaces = changes.of(Interest::resources(&["namespaces"]));
        namespaces.mark_unchanged();
        applied_tx.send_replace(1);
        assert!(namespaces.has_changed().expect("open"));
    }
}
