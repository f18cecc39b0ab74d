//! `/version`: the server's version in Kubernetes' `version.Info` shape.

use serde_json::Value;
use serde_json::json;

/// The Kubernetes release whose API Apiary reports (clients use it to pick features).
const MAJOR: &str = "1";
/// The minor release Apiary reports (metric deprecation compares against it too).
pub(crate) const RELEASE_MINOR: u32 = 37;

/// The `/version` document.
pub fn version_info() -> Value {
    json!({
        "major": MAJOR,
        "minor": RELEASE_MINOR.to_string(),
        "gitVersion": format!("v{MAJOR}.{RELEASE_MINOR}.0"),
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
