//! `--feature-gates` on the real binary: `apiary serve --help` lists the gates, and a gate
//! that may not be set stops start-up before anything is bound or written.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed unwrap is a failed test"
)]

use std::process::Command;
use std::process::Output;

/// `apiary serve` with complete but unused flags and `gates`, in a fresh data directory that
/// must stay empty.
fn serve_with(gates: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let output = Command::new(env!("CARGO_BIN_EXE_apiary"))
        .args([
            "serve",
            "--name=n",
            "--initial-cluster=n=https://127.0.0.1:1",
            "--listen-api=127.0.0.1:0",
            "--listen-peer=127.0.0.1:0",
            "--tls-cert-file=missing.crt",
            "--tls-private-key-file=missing.key",
            "--peer-cert-file=missing.crt",
            "--peer-key-file=missing.key",
            "--peer-trusted-ca-file=missing.crt",
            &format!("--feature-gates={gates}"),
        ])
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    assert!(!data.exists(), "start-up went as far as the data directory");
    (output, dir)
}

// R-VER-051 R-VER-088 R-VER-089: unlocking a GA gate, or setting a removed or unknown gate,
// stops the binary with kube-apiserver's message.
#[test]
fn a_gate_that_may_not_be_set_stops_start_up() {
    for (gates, message) in [
        (
            "AuthorizeWithSelectors=false",
            "cannot set feature gate AuthorizeWithSelectors to false, feature is locked to true",
        ),
        (
            "APIListChunking=true",
            "feature gate APIListChunking has been removed",
        ),
        ("NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
    ] {
        let (output, _dir) = serve_with(gates);
        assert!(!output.status.success(), "{gates} started");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{gates}: {stderr}");
        assert!(stderr.contains("\"--feature-gates\" flag"), "{stderr}");
    }
}

#[test]
fn serve_help_lists_the_gates() {
    let output = Command::new(env!("CARGO_BIN_EXE_apiary"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for line in [
        "APIResponseCompression=true|false (BETA - default=true)",
        "AllowUnsafeMalformedObjectDeletion=true|false (ALPHA - default=false, same on every \
         replica)",
        "CBORServingAndStorage=true|false (ALPHA - default=false, same on every replica)",
        "ConstrainedImpersonation=true|false (BETA - default=true)",
        "WatchList=true|false (BETA - default=true)",
        "AllAlpha=true|false (ALPHA - default=false)",
        "AllBeta=true|false (BETA - default=false)",
        "AuthorizeWithSelectors=true|false (GA - default=true, locked)",
        "AuthorizeNodeWithSelectors=true|false (GA - default=true, locked)",
    ] {
        assert!(help.contains(line), "{line} missing:\n{help}");
    }
}
