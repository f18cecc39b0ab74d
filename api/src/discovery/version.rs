//! `/version`: the server's version in Kubernetes' `version.Info` shape.

use serde_json::Value;
use serde_json::json;

/// The Kubernetes release whose API Apiary reports (clients use it to pick features).
const MAJOR: &str = "1";
const MINOR: &str = "37";

/// The `/version` document.
pub fn version_info() -> Value {
    json!({
        "major": MAJOR,
        "minor": MINOR,
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
