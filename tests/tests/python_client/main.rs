//! The official Python client (`kubernetes` from PyPI, unmodified) against a real
//! `apiary dev --flavor kubernetes` cluster: the scripts under `tests/python/` run in the venv
//! `.ci/run` prepares, and fail the test (not skip it) when that venv is missing.

mod t10_paged_list_and_watch;
mod t20_patch_delete;
mod t30_server_side_apply;

use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::process;
use apiary_tests::python;
use serde_json::Value;
use tokio::process::Command;

/// How long one script may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the script `name` with `args`; it must exit 0. Returns its stdout.
async fn run_script(name: &str, args: &[&str]) -> String {
    let python = python::python().expect("the venv with the kubernetes client");
    let mut command = Command::new(&python);
    command.arg(python::script(name)).args(args);
    process::run_script(command, &format!("{name} {args:?}"), SCRIPT_TIMEOUT).await
}

/// A kubernetes-flavor cluster for the scripts and the path of its kubeconfig. The venv is
/// checked first, so a missing one fails the test before a cluster starts.
async fn cluster() -> (DevCluster, String) {
    python::python().expect("the venv with the kubernetes client");
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .expect("a cluster");
    let kubeconfig = cluster.kubeconfig();
    let kubeconfig = kubeconfig.to_str().expect("a UTF-8 path").to_owned();
    (cluster, kubeconfig)
}

/// Runs the script `name` with `args` and reads the JSON summary it prints.
async fn summary_of(name: &str, args: &[&str]) -> Value {
    let out = run_script(name, args).await;
    serde_json::from_str(out.trim()).expect("a JSON summary")
}
