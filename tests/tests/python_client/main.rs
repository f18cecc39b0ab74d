//! The official Python client (`kubernetes` from PyPI, unmodified) against a real
//! `apiary dev --flavor kubernetes` cluster: the scripts under `tests/python/` run in the venv
//! `.ci/run` prepares, and fail the test (not skip it) when that venv is missing.

mod t10_paged_list_and_watch;
mod t20_patch_delete;

use std::process::Stdio;
use std::time::Duration;

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
