//! Many concurrent quorum reads on every replica, while writes go on through every replica:
//! each read reflects every write acknowledged before it began, however reads share rounds.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use crate::harness::Cluster;
use crate::harness::put;

/// Sequential writes per writer (one writer per replica).
const WRITES: usize = 40;
/// Concurrent readers per replica.
const READERS: usize = 24;

// R-HA-004: under concurrency, a quorum read on any replica, leader or follower, serves a
// revision that holds every write acknowledged anywhere before the read began.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_reads_see_every_write_acknowledged_before_they_began() {
    let mut cluster = Cluster::founded(3, 1000).await;
    cluster.wait_leader().await;
    let acked: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let writing = Arc::new(AtomicBool::new(true));

    let mut writers = Vec::new();
    for id in cluster.running() {
        let replica = cluster.replica(id);
        let acked = acked.clone();
        writers.push(tokio::spawn(async move {
            let key = format!("/registry/configmaps/default/from-{id}");
            for n in 0..WRITES {
                let done = replica
                    .write(put(&key, &n.to_string()))
                    .await
                    .expect("write");
                acked.lock().unwrap().insert(key.clone(), done.revision);
            }
        }));
    }
    let mut readers = Vec::new();
    for id in cluster.running() {
        for _ in 0..READERS {
            let replica = cluster.replica(id);
            let acked = acked.clone();
            let writing = writing.clone();
            readers.push(tokio::spawn(async move {
                let mut reads = 0u64;
                while writing.load(Ordering::SeqCst) {
                    let before = acked.lock().unwrap().clone();
                    let revision = replica.read_index().await.expect("read index");
                    for (key, acked_revision) in &before {
                        let seen = replica
                            .with_store(|s| s.get(key, Some(revision)).expect("readable"))
                            .map(|kv| kv.mod_revision);
                        assert!(
                            seen >= Some(*acked_revision),
                            "replica {id} read {key} at {revision}: {seen:?}, but revision \
                             {acked_revision} was acknowledged before the read began"
                        );
                    }
                    reads += 1;
                }
                reads
            }));
        }
    }
    for writer in writers {
        writer.await.expect("writer");
    }
    writing.store(false, Ordering::SeqCst);
    let mut reads = 0;
    for reader in readers {
        reads += reader.await.expect("reader");
    }
    assert!(reads >= (3 * READERS) as u64, "every reader read: {reads}");
    cluster.stop_all().await;
}
