//! Finds the `apiary` executable that the harness starts.
//!
//! The tests do not build the binary themselves (cargo holds its build lock while tests of one
//! crate are being built, and a build from inside a test would race other tests): the README's
//! test command builds it first with `cargo build -p apiary-node --bin apiary`.

use std::env;
use std::path::PathBuf;

use crate::error::HarnessError;
use crate::error::Result;

/// The environment variable that overrides where the `apiary` executable is.
pub const APIARY_BIN: &str = "APIARY_BIN";

/// The path of the `apiary` executable to start.
///
/// Uses `APIARY_BIN` when it is set. Otherwise it looks in the cargo profile directory of the
/// running executable: a test binary lives in `<target>/<profile>/deps/`, the benchmark in
/// `<target>/<profile>/`, and `cargo build -p apiary-node --bin apiary` (with `--release` for the
/// release profile) puts `apiary` in `<target>/<profile>/`. This follows `CARGO_TARGET_DIR`
/// without reading it, and pairs a debug test run with a debug `apiary`, a release benchmark with
/// a release one.
pub fn apiary_binary() -> Result<PathBuf> {
    if let Some(path) = env::var_os(APIARY_BIN) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(HarnessError::BinaryMissing { path })
        };
    }
    let exe = env::current_exe().map_err(|source| HarnessError::Io {
        path: PathBuf::from("/proc/self/exe"),
        source,
    })?;
    let mut dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let path = dir.join("apiary");
    if path.is_file() {
        Ok(path)
    } else {
        Err(HarnessError::BinaryMissing { path })
    }
}
