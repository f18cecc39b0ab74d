//! `apiary member list|add|remove|promote|transfer-leadership`: the membership area of the
//! operating API from the command line. Human output is a table; `-o json` prints the server's
//! JSON. `member add` prints the flags the new replica must be started with.

use std::fmt::Write as _;

use clap::Args;
use clap::Subcommand;
use clap::ValueEnum;
use serde_json::Value;
use serde_json::json;

use super::Client;
use super::ConnectArgs;
use super::CtlError;

/// How an operator command prints its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Output {
    /// For people: a table.
    #[default]
    #[value(alias = "table")]
    Text,
    /// The server's JSON answer.
    Json,
}

/// Flags of `apiary member`.
#[derive(Debug, Clone, Args)]
pub struct MemberArgs {
    /// How the cluster is reached.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Output format: `text` (a table) or `json`.
    #[arg(short = 'o', long, value_enum, default_value_t, global = true)]
    pub output: Output,
    /// What to do.
    #[command(subcommand)]
    pub command: MemberCommand,
}

/// The `apiary member` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum MemberCommand {
    /// List the members as the leader sees them.
    List,
    /// Add a replica as a learner, and print the flags to start it with.
    Add(AddArgs),
    /// Remove a member (a leader hands its leadership over first).
    Remove {
        /// The member's id.
        id: u64,
    },
    /// Make a learner a voter (refused until it has caught up).
    Promote {
        /// The learner's id.
        id: u64,
    },
    /// Hand leadership to a voter.
    TransferLeadership {
        /// The voter's id.
        id: u64,
    },
}

/// Flags of `apiary member add`.
#[derive(Debug, Clone, Args)]
pub struct AddArgs {
    /// The new replica's name (its `--name`).
    pub name: String,
    /// The new replica's peer URL (its `--listen-peer`, as `https://host:port`).
    #[arg(long)]
    pub peer_url: String,
    /// Its node id (default: the highest member id + 1).
    #[arg(long)]
    pub id: Option<u64>,
    /// Promote it to voter on its own once it has caught up.
    #[arg(long)]
    pub auto_promote: bool,
}

/// Runs `apiary member ...`, printing its answer.
pub async fn run(args: MemberArgs) -> Result<(), CtlError> {
    let client = Client::connect(&args.connect)?;
    let (answer, text) = match &args.command {
        MemberCommand::List => {
            let list = client.get("members").await?;
            let text = member_table(&list);
            (list, text)
        }
        MemberCommand::Add(add) => {
            let mut body = json!({"peerURL": add.peer_url, "autoPromote": add.auto_promote});
            if let Some(id) = add.id {
                body["id"] = json!(id);
            }
            let added = client.post("members", &body).await?;
            let list = client.get("members").await?;
            let text = start_flags(&add.name, &added, &list);
            (added, text)
        }
        MemberCommand::Remove { id } => {
            let answer = client.delete(&format!("members/{id}")).await?;
            (answer, format!("Member {id} removed from the cluster.\n"))
        }
        MemberCommand::Promote { id } => {
            let answer = client
                .post(&format!("members/{id}/promote"), &json!({}))
                .await?;
            (answer, format!("Member {id} promoted to voter.\n"))
        }
        MemberCommand::TransferLeadership { id } => {
            let path = format!("members/{id}/transfer-leadership");
            let answer = client.post(&path, &json!({})).await?;
            let leader = answer["leader"].as_u64().unwrap_or(*id);
            (
                answer,
                format!("Leadership transferred to member {leader}.\n"),
            )
        }
    };
    print(args.output, &answer, &text);
    Ok(())
}

/// Prints `answer` as JSON or `text`.
pub fn print(output: Output, answer: &Value, text: &str) {
    match output {
        Output::Json => println!(
            "{}",
            serde_json::to_string_pretty(answer).unwrap_or_else(|_| answer.to_string())
        ),
        Output::Text => print!("{text}"),
    }
}

/// The `MemberList` as a table.
fn member_table(list: &Value) -> String {
    let rows: Vec<Vec<String>> = members(list)
        .iter()
        .map(|m| {
            vec![
                cell(&m["id"]),
                cell(&m["role"]),
                cell(&m["peerURL"]),
                cell(&m["autoPromote"]),
                cell(&m["matched"]),
                cell(&m["lag"]),
            ]
        })
        .collect();
    let headers = ["ID", "ROLE", "PEER URL", "AUTO-PROMOTE", "MATCHED", "LAG"];
    format!(
        "{}effective version: {}\n",
        table(&headers, &rows),
        cell(&list["effectiveVersion"])
    )
}

/// The members of a `MemberList` or `ClusterStatus`.
pub fn members(answer: &Value) -> &[Value] {
    answer["members"].as_array().map_or(&[], Vec::as_slice)
}

/// A JSON value in a table cell: strings bare, null as `-`.
pub fn cell(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `rows` under `headers`, in boxed columns as wide as their widest cell.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let rule: String = widths.iter().fold("+".to_owned(), |mut rule, w| {
        rule.push_str(&"-".repeat(w + 2));
        rule.push('+');
        rule
    });
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .fold("|".to_owned(), |mut line, (cell, width)| {
                let _ = write!(line, " {cell:<width$} |");
                line
            })
    };
    let mut out = format!("{rule}\n{}\n{rule}\n", line(headers.to_vec()));
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out.push_str(&rule);
    out.push('\n');
    out
}

/// What `member add` prints: the new member, and the flags that start it. `--initial-cluster`
/// lists every id up to the new one, since a replica's id is its position there: members by
/// their peer URL, ids no member has any more (removed) as a placeholder at the leader's URL.
fn start_flags(name: &str, added: &Value, list: &Value) -> String {
    let id = added["id"].as_u64().unwrap_or(0);
    let url = cell(&added["peerURL"]);
    let members = members(list);
    let url_of = |wanted: u64| {
        members
            .iter()
            .find(|m| m["id"].as_u64() == Some(wanted))
            .map(|m| cell(&m["peerURL"]))
    };
    let leader_url = members
        .iter()
        .find(|m| m["role"] == "leader")
        .map_or_else(|| url.clone(), |m| cell(&m["peerURL"]));
    let entries: Vec<String> = (1..=id)
        .map(|other| {
            if other == id {
                format!("{name}={url}")
            } else if let Some(member_url) = url_of(other) {
                format!("{}={member_url}", other_name(name, other))
            } else {
                format!("removed-{other}={leader_url}")
            }
        })
        .collect();
    let role = if added["autoPromote"] == true {
        "a learner (promoted once caught up)"
    } else {
        "a learner"
    };
    format!(
        "Member {id} added to the cluster as {role} at {url}.\n\n\
         Start it with:\n  \
         --name={name}\n  \
         --initial-cluster={}\n  \
         --initial-cluster-state=existing\n",
        entries.join(",")
    )
}

/// The name `--initial-cluster` gives member `id` (only the new replica's own name matters
/// there; the others need only differ from it).
fn other_name(new_name: &str, id: u64) -> String {
    let name = format!("node-{id}");
    if name == new_name {
        format!("member-{id}")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_prints_every_position_up_to_the_new_id() {
        let added = json!({"id": 4, "peerURL": "https://127.0.0.1:7004", "autoPromote": false});
        let list = json!({"members": [
            {"id": 1, "role": "leader", "peerURL": "https://127.0.0.1:7001"},
            {"id": 3, "role": "voter", "peerURL": "https://127.0.0.1:7003"},
            {"id": 4, "role": "learner", "peerURL": "https://127.0.0.1:7004"},
        ]});
        let text = start_flags("node-4", &added, &list);
        assert!(
            text.contains(
                "--initial-cluster=node-1=https://127.0.0.1:7001,removed-2=https://127.0.0.1:7001,\
                 node-3=https://127.0.0.1:7003,node-4=https://127.0.0.1:7004\n"
            ),
            "{text}"
        );
        assert!(text.contains("--name=node-4\n"), "{text}");
        assert!(
            text.contains("--initial-cluster-state=existing\n"),
            "{text}"
        );
    }

    #[test]
    fn a_table_aligns_its_columns() {
        let text = table(&["ID", "URL"], &[vec!["10".into(), "u".into()]]);
        assert_eq!(
            text,
            "+----+-----+\n| ID | URL |\n+----+-----+\n| 10 | u   |\n+----+-----+\n"
        );
    }
}
