//! Tests of the deployment files in `deploy/` and of `apiary certs`: the certificate files and
//! kubeconfig it writes, and clusters started from the real systemd unit's `ExecStart` line and
//! the real compose files' commands (no init system or container runtime runs here, so the tests
//! read those files and do what systemd and compose would: substitute the environment file,
//! map the volumes to temporary directories and the container ports to free loopback ports).

mod replicas;
mod t10_certs;
mod t20_systemd;
mod t30_compose;

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

use apiary_tests::binary::apiary_binary;

/// A file of the repository's `deploy/` directory.
fn deploy_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(relative)
}

/// The text of a file of `deploy/`.
fn read_deploy_file(relative: &str) -> String {
    let path = deploy_file(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `apiary certs` with `args` to its end.
fn certs(args: &[&str]) -> Output {
    let binary = apiary_binary().expect("the apiary binary (cargo build -p apiary-node)");
    Command::new(binary)
        .arg("certs")
        .args(args)
        .output()
        .expect("apiary certs starts")
}

/// Runs `apiary certs` with `args`, which must succeed.
fn certs_ok(args: &[&str]) {
    let output = certs(args);
    assert!(
        output.status.success(),
        "apiary certs {args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
