//! The Python that runs the official `kubernetes` client's scripts under `tests/python/`: the
//! venv `scripts/setup` prepares (`APIARY_PYTHON`, or `~/.cache/apiary-venv/bin/python`). A
//! missing venv fails the tests that need it, never skips them.

use std::env;
use std::path::PathBuf;

use crate::error::HarnessError;
use crate::error::Result;

/// The environment variable that names the Python to run the scripts with.
pub const APIARY_PYTHON: &str = "APIARY_PYTHON";

/// Where `.ci/run` puts the venv, under `$HOME`.
const DEFAULT_VENV: &str = ".cache/apiary-venv";

/// The Python interpreter to run the scripts with; it must exist.
pub fn python() -> Result<PathBuf> {
    let path = match env::var_os(APIARY_PYTHON) {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env::var_os("HOME").unwrap_or_default())
            .join(DEFAULT_VENV)
            .join("bin/python"),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(HarnessError::PythonMissing { path })
    }
}

/// The path of the script `name` under `tests/python/`.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(name)
}
