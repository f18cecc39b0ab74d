//! `apiary status`: the cluster's status from the operating API, as a summary line and a table
//! of the members' own figures (`-o json`: the server's JSON).

use clap::Args;
use serde_json::Value;

use super::Client;
use super::ConnectArgs;
use super::CtlError;
use super::member::Output;
use super::member::cell;
use super::member::members;
use super::member::print;
use super::member::table;

/// Flags of `apiary status`.
#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    /// How the cluster is reached.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Output format: `text` or `json`.
    #[arg(short = 'o', long, value_enum, default_value_t)]
    pub output: Output,
}

/// Runs `apiary status`, printing the cluster's status.
pub async fn run(args: StatusArgs) -> Result<(), CtlError> {
    let client = Client::connect(&args.connect)?;
    let status = client.get("status").await?;
    print(args.output, &status, &status_text(&status));
    Ok(())
}

/// The status for people.
fn status_text(status: &Value) -> String {
    let rows: Vec<Vec<String>> = members(status)
        .iter()
        .map(|m| {
            let reachable = m["reachable"] == true;
            vec![
                cell(&m["id"]),
                cell(&m["role"]),
                cell(&m["peerURL"]),
                if reachable { "yes" } else { "no" }.to_owned(),
                cell(&m["term"]),
                cell(&m["committed"]),
                cell(&m["applied"]),
                cell(&m["lag"]),
                cell(&m["logEntries"]),
                cell(&m["snapshotIndex"]),
                seconds(&m["snapshotAgeSeconds"]),
                cell(&m["keys"]),
                cell(&m["storeBytes"]),
                cell(&m["versions"]["binary"]),
                cell(&m["versions"]["newestProtocol"]),
            ]
        })
        .collect();
    let summary = format!(
        "leader: {}  term: {}  effective version: {}  served by: {}{}\n",
        cell(&status["leader"]),
        cell(&status["term"]),
        cell(&status["effectiveVersion"]),
        cell(&status["servedBy"]),
        if status["leaderView"] == true {
            ""
        } else {
            "  (no leader answered: members as this replica knows them)"
        },
    );
    let headers = [
        "ID",
        "ROLE",
        "PEER URL",
        "REACHABLE",
        "TERM",
        "COMMITTED",
        "APPLIED",
        "LAG",
        "LOG ENTRIES",
        "SNAPSHOT",
        "SNAPSHOT AGE",
        "KEYS",
        "DB BYTES",
        "VERSION",
        "PROTOCOL",
    ];
    summary + &table(&headers, &rows)
}

/// A number of seconds as `42s`; `-` when absent.
fn seconds(value: &Value) -> String {
    value
        .as_u64()
        .map_or_else(|| "-".to_owned(), |s| format!("{s}s"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unreachable_member_shows_as_such() {
        let status = json!({
            "leader": 1, "term": 2, "effectiveVersion": 2, "servedBy": 1, "leaderView": true,
            "members": [
                {"id": 1, "role": "leader", "peerURL": "https://a:1", "reachable": true,
                 "term": 2, "committed": 9, "applied": 9, "lag": 0, "logEntries": 9,
                 "snapshotIndex": 8, "snapshotAgeSeconds": 42, "keys": 40, "storeBytes": 5120,
                 "versions": {"binary": "0.1.0", "newestProtocol": 2}},
                {"id": 2, "role": "voter", "peerURL": "https://a:2", "reachable": false},
            ]
        });
        let text = status_text(&status);
        assert!(
            text.starts_with("leader: 1  term: 2  effective version: 2"),
            "{text}"
        );
        assert!(text.contains("| 2  | voter  | https://a:2 | no "), "{text}");
        assert!(text.contains("| 0.1.0   |"), "{text}");
        assert!(
            text.contains("| 8        | 42s          | 40   | 5120     |"),
            "{text}"
        );
    }
}
