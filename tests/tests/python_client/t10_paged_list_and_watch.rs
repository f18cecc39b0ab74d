//! A paged list (`limit` / `_continue`) across replicas, and `watch.Watch().stream` seeing
//! writes made through another replica meanwhile.

use std::process::Stdio;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::python;
use tokio::process::Command;

/// How long one script may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the script `name` with `args`; it must exit 0. Returns its stdout.
async fn run_script(name: &str, args: &[&str]) -> String {
    let python = python::python().expect("the venv with the kubernetes client");
    let run = Command::new(&python)
        .arg(python::script(name))
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(SCRIPT_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("{name} took more than {SCRIPT_TIMEOUT:?}"))
        .expect("python runs");
    assert!(
        output.status.success(),
        "{name} {args:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

// R-HA-016, R-HA-008, R-RES-184, R-HA-010
#[tokio::test]
async fn the_python_client_pages_through_a_list_and_streams_a_watch() {
    // Before the cluster: a missing venv fails at once.
    python::python().unwrap();
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let kubeconfig = cluster.kubeconfig();
    let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path");

    let out = run_script(
        "paged_list.py",
        &[kubeconfig, "node-1,node-2,node-3", "25", "4"],
    )
    .await;
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("a JSON summary");
    assert!(summary["items"].as_u64() >= Some(25), "{summary}");
    assert!(summary["pages"].as_u64() >= Some(7), "{summary}");

    let out = run_script("watch_events.py", &[kubeconfig, "node-3", "node-1"]).await;
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("a JSON summary");
    assert_eq!(
        summary["events"].as_array().map(Vec::len),
        Some(3),
        "{summary}"
    );
}
