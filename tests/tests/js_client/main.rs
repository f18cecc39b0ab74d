//! The official JavaScript client (`@kubernetes/client-node` from the npm registry, unmodified,
//! pinned in `tests/js/package-lock.json`) against a real `apiary dev --flavor kubernetes`
//! cluster: the scripts under `tests/js/` run with the Node.js and the client `scripts/setup`
//! installs, and fail the test (not skip it) when either is missing.

mod t10_crud_paging_watch;

use std::time::Duration;

use apiary_tests::js;
use apiary_tests::process;
use tokio::process::Command;

/// How long one script may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the script `name` with `args`; it must exit 0. Answers its stdout parsed as the JSON
/// summary it prints.
async fn run_script(name: &str, args: &[&str]) -> serde_json::Value {
    let node = js::node().expect("Node.js with @kubernetes/client-node");
    let mut command = Command::new(&node);
    command
        .arg(js::script(name))
        .args(args)
        .current_dir(js::dir());
    let what = format!("{name} {args:?}");
    let stdout = process::run_script(command, &what, SCRIPT_TIMEOUT).await;
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{name} printed no JSON summary ({e}): {stdout}"))
}
