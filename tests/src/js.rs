//! The Node.js that runs the official JavaScript client's (`@kubernetes/client-node`) scripts
//! under `tests/js/`, with the client `scripts/setup` installs there (`npm ci` from the pinned
//! lock file into `tests/js/node_modules`). `APIARY_NODE` names the `node` to run (default: the
//! one on `PATH`). A missing or too old `node`, or a missing client, fails the tests that need
//! it, never skips them.

use std::env;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;

use crate::error::HarnessError;
use crate::error::Result;

/// The environment variable that names the `node` to run the scripts with.
pub const APIARY_NODE: &str = "APIARY_NODE";

/// The oldest Node.js major version the pinned client runs on (its `Watch` uses
/// `AbortSignal.any`).
const MIN_NODE_MAJOR: u32 = 20;

/// The installed client's manifest, under [`dir`].
const CLIENT_MANIFEST: &str = "node_modules/@kubernetes/client-node/package.json";

/// The directory of the scripts, `package.json` and the installed client.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js")
}

/// The `node` to run the scripts with, once it is known to run, to be recent enough and to find
/// the client installed.
pub fn node() -> Result<PathBuf> {
    let missing = |reason: String| HarnessError::JsClientMissing { reason };
    let manifest = dir().join(CLIENT_MANIFEST);
    if !manifest.is_file() {
        return Err(missing(format!("{} is missing", manifest.display())));
    }
    let program = env::var_os(APIARY_NODE).map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let output = Command::new(&program)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| missing(format!("{} does not run: {e}", program.display())))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let major = version
        .strip_prefix('v')
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(major) if output.status.success() && major >= MIN_NODE_MAJOR => Ok(program),
        _ => Err(missing(format!(
            "{} is version {version:?}, older than {MIN_NODE_MAJOR}",
            program.display()
        ))),
    }
}

/// The path of the script `name` under `tests/js/`.
pub fn script(name: &str) -> PathBuf {
    dir().join(name)
}
