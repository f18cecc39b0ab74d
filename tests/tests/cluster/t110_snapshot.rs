//! Backup and restore (`apiary snapshot save|status|restore`) and periodic snapshots: a backup
//! taken under load from a running cluster restores into a new cluster with every object and
//! resourceVersion of the snapshot revision, whose writes continue above the revision floor
//! while reads and watches from older revisions answer 410 Expired; a corrupted file is
//! refused; periodic snapshots appear and are pruned.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::binary::apiary_binary;
use apiary_tests::objects;
use apiary_tests::watch_stream::EventStream;
use http::StatusCode;
use serde_json::Value;

use crate::create_configmap;
use crate::list_configmaps;
use crate::revision;

/// How long periodic snapshots get to appear and be pruned (a 1 s interval).
const PERIODIC_DEADLINE: Duration = Duration::from_secs(30);

/// How far above the recorded highest revision `--revision-floor` lifts the restored cluster.
const FLOOR_LIFT: u64 = 500;

/// Runs `apiary` with `args`; its output.
fn apiary(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(apiary_binary().expect("the apiary binary"))
        .args(args)
        .output()
        .expect("apiary runs")
}

/// Runs `apiary` with `args`, which must succeed; its standard output.
fn apiary_ok(args: &[&std::ffi::OsStr]) -> String {
    let out = apiary(args);
    assert!(
        out.status.success(),
        "apiary {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `apiary snapshot status FILE -o json`.
fn status_json(file: &Path) -> Value {
    let out = apiary_ok(&[
        "snapshot".as_ref(),
        "status".as_ref(),
        file.as_os_str(),
        "-o".as_ref(),
        "json".as_ref(),
    ]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"))
}

/// (name, resourceVersion, data.v) of every config map in `list`, in order.
fn summary(list: &Value) -> Vec<(String, String, String)> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            (
                item["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                objects::resource_version(item)
                    .unwrap_or_default()
                    .to_owned(),
                item["data"]["v"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
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

/// The periodic snapshot files in `dir`, sorted.
fn periodic_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.expect("a directory entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "db"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

// Issue 18, item 3 (backup and restore; the CHECKLIST has no ID for it yet).
#[tokio::test]
async fn a_backup_under_load_restores_into_a_new_cluster_above_its_floor() {
    let source = DevCluster::start(
        DevOptions::default()
            .flag("--snapshot-interval=1s")
            .flag("--snapshot-retention=2"),
    )
    .await
    .unwrap();
    let node1 = source.client(1).unwrap().clone();
    for i in 0..5 {
        create_configmap(&node1, 1, &format!("before-{i}"), "1").await;
    }

    // Writes keep coming (the first is in) while replica 2 takes the backup.
    let loading = Arc::new(AtomicBool::new(true));
    let (first_written, first) = tokio::sync::oneshot::channel();
    let load = {
        let loading = loading.clone();
        let client = node1.clone();
        tokio::spawn(async move {
            let mut first_written = Some(first_written);
            let mut i = 0;
            while loading.load(Ordering::Relaxed) {
                create_configmap(&client, 1, &format!("load-{i}"), "1").await;
                if let Some(tell) = first_written.take() {
                    let _ = tell.send(());
                }
                i += 1;
            }
            i
        })
    };
    first.await.expect("the load writes");
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("backup.db");
    let kubeconfig = source.kubeconfig();
    let saved = {
        let args: Vec<std::ffi::OsString> = vec![
            "snapshot".into(),
            "save".into(),
            file.clone().into(),
            "--kubeconfig".into(),
            kubeconfig.into(),
            "--context".into(),
            DevCluster::context(2).into(),
        ];
        tokio::task::spawn_blocking(move || {
            let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
            apiary_ok(&args)
        })
        .await
        .unwrap()
    };
    loading.store(false, Ordering::Relaxed);
    let written_under_load = load.await.unwrap();
    assert!(written_under_load > 0);
    assert!(saved.contains("revision"), "{saved}");
    assert!(!work.path().join("backup.db.part").exists());

    let status = status_json(&file);
    assert_eq!(status["checksumOk"], true, "{status}");
    let at = status["revision"].as_u64().expect("a revision");
    let highest = status["revisionFloor"].as_u64().expect("a floor");
    assert!(highest >= at, "{status}");
    assert!(
        saved.contains(status["checksum"].as_str().unwrap()),
        "{saved} vs {status}"
    );
    let expected = list_configmaps(
        &node1,
        1,
        &format!("resourceVersion={at}&resourceVersionMatch=Exact"),
    )
    .await;
    let expected = summary(&expected);
    assert!(
        expected.len() >= 5,
        "{expected:?} ({written_under_load} under load)"
    );

    // A corrupted copy is refused by status and by restore, which then writes nothing.
    let corrupt = work.path().join("corrupt.db");
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::write(&corrupt, &bytes).unwrap();
    let refused = apiary(&["snapshot".as_ref(), "status".as_ref(), corrupt.as_os_str()]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("checksum mismatch"), "{stderr}");

    // The periodic snapshots of replica 1 appear, read as backups, and only two are kept.
    let periodic_dir = source.dir().join("node-1").join("backups");
    let started = Instant::now();
    loop {
        let files = periodic_files(&periodic_dir);
        assert!(files.len() <= 2, "{files:?}");
        if files.len() == 2 && started.elapsed() > Duration::from_secs(4) {
            let newest = status_json(&files[1]);
            assert_eq!(newest["checksumOk"], true, "{newest}");
            break;
        }
        assert!(
            started.elapsed() < PERIODIC_DEADLINE,
            "periodic snapshots: {files:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    drop(source);

    // The new cluster: its own ports and certificates, its data directories replaced by the
    // backup restored for each member, lifted above the floor.
    let mut restored = DevCluster::start(DevOptions::default()).await.unwrap();
    let members = initial_cluster_of(&restored);
    restored.stop().unwrap();
    let floor = highest + FLOOR_LIFT;
    for replica in 1..=restored.nodes() {
        let dir = restored.dir().join(format!("node-{replica}"));
        std::fs::remove_dir_all(&dir).unwrap();
        let refused = apiary(&[
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
        assert!(!refused.status.success());
        assert!(!dir.exists(), "a refused restore writes nothing");
        apiary_ok(&[
            "snapshot".as_ref(),
            "restore".as_ref(),
            file.as_os_str(),
            "--dir".as_ref(),
            dir.as_os_str(),
            "--name".as_ref(),
            format!("node-{replica}").as_ref(),
            "--initial-cluster".as_ref(),
            members.as_ref(),
            "--revision-floor".as_ref(),
            floor.to_string().as_ref(),
        ]);
    }
    restored.start_again().await.unwrap();

    for replica in 1..=restored.nodes() {
        let client = restored.client(replica).unwrap();
        let list = list_configmaps(client, replica, "").await;
        assert_eq!(expected, summary(&list), "node-{replica}");
        assert!(
            revision(&list) > floor,
            "node-{replica}: {}",
            revision(&list)
        );
    }
    let client = restored.client(1).unwrap();
    let created = create_configmap(client, 1, "after-restore", "1").await;
    assert!(revision(&created) > floor, "{created}");

    // Below the floor everything counts as compacted: informers get 410 and relist.
    let exact_old = format!(
        "{}?resourceVersion={at}&resourceVersionMatch=Exact",
        objects::configmaps_path()
    );
    let reply = client.get(&exact_old).await.unwrap();
    assert_eq!(reply.status, StatusCode::GONE, "{}", reply.text());
    let watch_old = format!(
        "{}?watch=1&resourceVersion={at}",
        objects::configmaps_path()
    );
    let mut watch = EventStream::open(client, &watch_old).await.unwrap();
    let event = watch
        .next(Duration::from_secs(10))
        .await
        .unwrap()
        .expect("an ERROR event");
    assert_eq!(event.kind, "ERROR", "{event:?}");
    assert_eq!(event.object["code"], 410, "{event:?}");
    assert_eq!(event.object["reason"], "Expired", "{event:?}");
}
