//! Forced deletion of a corrupt object in a real three-replica cluster: undecodable bytes
//! are put under a config map's key through the production backup and restore path (the
//! backup file is rewritten offline, then restored into every member), so no test-only
//! access to the store exists in the server. Every replica then reports the key on get and
//! list, a normal delete fails, and a delete with
//! `ignoreStoreReadErrorWithClusterBreakingPotential` under the gate removes it everywhere.

use std::ffi::OsStr;
use std::process::Command;
use std::time::Duration;
use std::time::Instant;

use apiary_raft::state_machine::Backup;
use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HttpClient;
use apiary_tests::binary::apiary_binary;
use apiary_tests::objects;
use bytes::Bytes;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use crate::create_configmap;
use crate::item_names;

const GATE: &str = "--feature-gates=AllowUnsafeMalformedObjectDeletion=true";
const KEY: &str = "/registry/core/configmaps/default/held";
const DEADLINE: Duration = Duration::from_secs(20);

/// Runs `apiary` with `args`, which must succeed.
fn apiary_ok(args: &[&OsStr]) {
    let out = Command::new(apiary_binary().expect("the apiary binary"))
        .args(args)
        .output()
        .expect("apiary runs");
    assert!(
        out.status.success(),
        "apiary {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `--initial-cluster` replica 1 of `cluster` was started with (from its command line).
fn initial_cluster_of(cluster: &DevCluster) -> String {
    let pid = cluster.pid(1).expect("node-1 runs");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("its command line");
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let at = args
        .iter()
        .position(|a| a == "--initial-cluster")
        .expect("--initial-cluster given");
    args[at + 1].clone()
}

/// The status of `reply`, which must be a `Status` with `code` and `reason`.
fn status(reply: &apiary_tests::Reply, path: &str, code: u16, reason: &str) -> Value {
    assert_eq!(reply.status.as_u16(), code, "{path}: {}", reply.text());
    let s: Value = reply.json(path).expect("a Status");
    assert_eq!(s["reason"], reason, "{s}");
    s
}

/// Polls the list of config maps on `client` until it answers 200 with exactly `names`.
async fn wait_for_list(client: &HttpClient, replica: usize, names: &[&str]) {
    let path = objects::configmaps_path();
    let started = Instant::now();
    loop {
        let reply = client.get(&path).await.expect("the replica answers");
        if reply.status == StatusCode::OK
            && item_names(&reply.json(&path).expect("a list")) == names
        {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "node-{replica}: {}",
            reply.text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// R-RES-063, R-RES-064: in a real cluster, the forced delete removes an object that cannot be
// decoded although a finalizer holds it, on every replica; until then every replica names its
// key on get and list (StorageReadError with the gate on).
#[tokio::test]
async fn a_corrupt_object_restored_into_a_cluster_is_force_deleted_everywhere() {
    let mut cluster = DevCluster::start(DevOptions::default().flag(GATE))
        .await
        .unwrap();
    let node1 = cluster.client(1).unwrap().clone();
    create_configmap(&node1, 1, "fine", "1").await;
    let mut held = objects::configmap("held", &[("v", "1")]);
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    let made = node1
        .post(&objects::configmaps_path(), &held)
        .await
        .unwrap();
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());

    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("backup.db");
    let kubeconfig = cluster.kubeconfig();
    let context = DevCluster::context(1);
    apiary_ok(&[
        "snapshot".as_ref(),
        "save".as_ref(),
        file.as_os_str(),
        "--kubeconfig".as_ref(),
        kubeconfig.as_os_str(),
        "--context".as_ref(),
        context.as_ref(),
    ]);
    let mut backup = Backup::decode(&std::fs::read(&file).unwrap()).expect("a backup");
    let version = backup
        .store
        .keys
        .iter_mut()
        .find(|k| k.key == KEY)
        .and_then(|k| k.versions.last_mut())
        .expect("the held config map is in the backup");
    version.value = Some(Bytes::from_static(b"\xff\xfe\x00 not an object"));
    let corrupt = work.path().join("corrupt.db");
    std::fs::write(&corrupt, backup.encode()).unwrap();

    let members = initial_cluster_of(&cluster);
    cluster.stop().unwrap();
    for replica in 1..=cluster.nodes() {
        let dir = cluster.dir().join(format!("node-{replica}"));
        std::fs::remove_dir_all(&dir).unwrap();
        apiary_ok(&[
            "snapshot".as_ref(),
            "restore".as_ref(),
            corrupt.as_os_str(),
            "--dir".as_ref(),
            dir.as_os_str(),
            "--name".as_ref(),
            format!("node-{replica}").as_ref(),
            "--initial-cluster".as_ref(),
            members.as_ref(),
        ]);
    }
    cluster.start_again().await.unwrap();

    let item = objects::configmap_path("held");
    let list = objects::configmaps_path();
    for replica in 1..=cluster.nodes() {
        let client = cluster.client(replica).unwrap();
        let got = client.get(&item).await.unwrap();
        let s = status(&got, &item, 500, "InternalError");
        assert!(s["message"].as_str().unwrap().contains(KEY), "{s}");
        let listed = client.get(&list).await.unwrap();
        let s = status(&listed, &list, 500, "StorageReadError");
        assert_eq!(s["details"]["causes"][0]["field"], KEY, "{s}");
        assert_eq!(s["details"]["causes"].as_array().map(Vec::len), Some(1));
    }

    let node2 = cluster.client(2).unwrap();
    let normal = node2.delete(&item).await.unwrap();
    status(&normal, &item, 500, "InternalError");
    let forced_path = format!("{item}?ignoreStoreReadErrorWithClusterBreakingPotential=true");
    let forced = node2.delete(&forced_path).await.unwrap();
    assert_eq!(forced.status, StatusCode::OK, "{}", forced.text());
    let answer: Value = forced.json(&forced_path).unwrap();
    assert_eq!(answer["status"], "Success", "{answer}");
    assert_eq!(
        answer["details"],
        json!({"name": "held", "kind": "ConfigMap"})
    );
    for replica in 1..=cluster.nodes() {
        wait_for_list(cluster.client(replica).unwrap(), replica, &["fine"]).await;
    }
}
