//! `kubectl get configmaps --watch` on node-3 of a cluster, and reading its output line by
//! line with a deadline: what the watch tests share.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use tokio::io::AsyncBufReadExt;
use tokio::io::BufReader;
use tokio::io::Lines;
use tokio::process::Child;
use tokio::process::ChildStdout;
use tokio::process::Command;

/// How long kubectl may take to print an expected line.
const LINE_TIMEOUT: Duration = Duration::from_secs(30);

/// kubectl's output, line by line.
pub type Output = Lines<BufReader<ChildStdout>>;

/// Starts `kubectl get configmaps --watch <args>` against node-3 of `kubeconfig`'s cluster.
pub fn watch_configmaps(kubeconfig: &Path, args: &[&str]) -> (Child, Output) {
    let mut kubectl = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args([
            "--context",
            "node-3",
            "--request-timeout=60s",
            "get",
            "configmaps",
            "--watch",
        ])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl starts");
    let out = BufReader::new(kubectl.stdout.take().expect("stdout")).lines();
    (kubectl, out)
}

/// Reads lines of `out` until one `wanted` accepts, and answers it; fails (naming `what`)
/// after [`LINE_TIMEOUT`] or at the end of the output.
pub async fn read_line_where(
    out: &mut Output,
    what: &str,
    wanted: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + LINE_TIMEOUT;
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = tokio::time::timeout(left, out.next_line())
            .await
            .unwrap_or_else(|_| panic!("no {what} within {LINE_TIMEOUT:?}; saw {before:?}"))
            .expect("kubectl's output reads")
            .unwrap_or_else(|| panic!("kubectl ended before {what}; saw {before:?}"));
        if wanted(&line) {
            return line;
        }
        before.push(line);
    }
}
