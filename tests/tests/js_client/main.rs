//! The official JavaScript client (`@kubernetes/client-node` from the npm registry, unmodified,
//! pinned in `tests/js/package-lock.json`) against a real `apiary dev --flavor kubernetes`
//! cluster: the scripts under `tests/js/` run with the Node.js and the client `scripts/setup`
//! installs, and fail the test (not skip it) when either is missing.

mod t10_crud_paging_watch;

use std::process::Stdio;
use std::time::Duration;

use apiary_tests::js;
use tokio::process::Command;

/// How long one script may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the script `name` with `args`; it must exit 0. Answers its stdout parsed as the JSON
/// summary it prints.
async fn run_script(name: &str, args: &[&str]) -> serde_json::Value {
    let node = js::node().expect("Node.js with @kubernetes/client-node");
    let run = Command::new(&node)
        .arg(js::script(name))
        .args(args)
        .current_dir(js::dir())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(SCRIPT_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("{name} took more than {SCRIPT_TIMEOUT:?}"))
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{name} {args:?} failed ({}):\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{name} printed no JSON summary ({e}): {stdout}"))
}
