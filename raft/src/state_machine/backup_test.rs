use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::command::Op;
use crate::command::Put;
use crate::command::Txn;
use crate::command::op;
use crate::log::StdFs;
use crate::mvcc::MvccError;
use crate::mvcc::Store;
use crate::state_machine::RestoreError;
use crate::state_machine::RestoreTarget;
use crate::state_machine::restore;
use crate::state_machine::snapshot_dir::SnapshotDir;
use crate::state_machine::snapshot_file::SnapshotFile;

fn put(key: &str, value: &str) -> Txn {
    Txn {
        compares: Vec::new(),
        success: vec![Op {
            kind: Some(op::Kind::Put(Put {
                key: key.to_string(),
                value: Bytes::from(value.to_string()),
            })),
        }],
        failure: Vec::new(),
    }
}

fn sample() -> Backup {
    let mut store = Store::new();
    store.apply_txn(3, &put("/a", "1"));
    store.apply_txn(5, &put("/b", "2"));
    store.apply_txn(7, &put("/a", "3"));
    Backup {
        meta: typ::SnapshotMeta::default(),
        store: store.to_snapshot(),
        info: BackupInfo {
            revision: 7,
            highest_revision: 9,
            cluster_id: "source".to_string(),
        },
    }
}

#[test]
fn round_trips_with_its_information() {
    let back = Backup::decode(&sample().encode()).unwrap();
    assert_eq!(sample().info, back.info);
    assert_eq!(sample().store, back.store);
    assert_eq!(2, back.live_keys());
    assert_eq!(9, back.floor(0));
    assert_eq!(20, back.floor(20));
}

#[test]
fn every_flipped_byte_and_every_truncation_is_refused() {
    let good = sample().encode();
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x01;
        assert!(
            matches!(Backup::decode(&bad), Err(BackupError::Checksum)),
            "flip at {i} accepted"
        );
    }
    for len in [0, 10, good.len() - 1] {
        assert!(Backup::decode(&good[..len]).is_err(), "len {len}");
    }
}

#[test]
fn a_raft_snapshot_file_is_not_a_backup() {
    let file = SnapshotFile {
        meta: typ::SnapshotMeta::default(),
        store: Bytes::from(Store::new().to_snapshot().encode_to_vec()),
    };
    let (head, store) = file.parts();
    let mut bytes = [head.as_slice(), store].concat();
    let digest = Sha256::digest(&bytes);
    bytes.extend_from_slice(&digest);
    assert!(matches!(
        Backup::decode(&bytes),
        Err(BackupError::NotABackup)
    ));
}

#[test]
fn a_restored_directory_holds_the_store_compacted_at_the_floor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("member");
    let target = RestoreTarget {
        members: BTreeMap::from([(1, "https://a".to_string()), (2, "https://b".to_string())]),
        revision_floor: 0,
        cluster_id: "restored".to_string(),
    };
    assert_eq!(9, restore(&sample(), &dir, &target).unwrap());
    let snapshots = SnapshotDir::open(Arc::new(StdFs), &dir.join("snapshots")).unwrap();
    let file = snapshots.read_current().unwrap().unwrap();
    assert_eq!(Some(9), file.meta.last_log_id.map(|l| l.index));
    assert_eq!(
        vec![1, 2],
        file.meta
            .last_membership
            .membership()
            .voter_ids()
            .collect::<Vec<_>>()
    );
    let store = Store::from_snapshot(StoreSnapshot::decode(file.store).unwrap());
    assert_eq!((9, 9), (store.revision(), store.compacted()));
    assert_eq!("restored", store.cluster_id());
    let a = store.get("/a", None).unwrap().unwrap();
    assert_eq!((3, 7, 2), (a.create_revision, a.mod_revision, a.version));
    assert!(matches!(
        store.get("/a", Some(7)),
        Err(MvccError::Compacted { .. })
    ));
    assert!(matches!(
        restore(&sample(), &dir, &target),
        Err(RestoreError::NotEmpty(_))
    ));
}
