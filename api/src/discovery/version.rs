//! `/version`: the server's version in Kubernetes' `version.Info` shape.

use serde_json::Value;
use serde_json::json;

/// The major number of the Kubernetes release whose API Apiary reports (clients use it to
/// pick features; deprecations are judged against it).
pub(crate) const MAJOR: u32 = 1;
/// The minor number of that release.
pub(crate) const MINOR: u32 = 37;

/// The `/version` document.
pub fn version_info() -> Value {
    json!({
        "major": MAJOR.to_string(),
        "minor": MINOR.to_string(),
        "gitVersion": format!("v{MAJOR}.{MINOR}.0"),
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, go_arch()),
    })
}

/// The architecture as Go names it (clients compare these strings).
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}
