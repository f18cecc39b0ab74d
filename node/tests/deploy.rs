//! The deployment files in `deploy/` stay in step with the binary: every Procfile line is a
//! valid `apiary serve` command line, the replicas of one file describe one cluster, and the
//! ports are those `apiary dev` writes into its kubeconfig.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed unwrap is a failed test"
)]

use apiary_node::cli::Cli;
use apiary_node::cli::Command;
use apiary_node::config::ServeConfig;
use apiary_node::dev::ports;
use clap::Parser;
use clap::error::ErrorKind;

fn replicas(procfile: &str) -> Vec<(clap::error::Result<Cli>, String)> {
    procfile
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (name, command) = line.split_once(':').unwrap();
            let argv: Vec<&str> = command.split_whitespace().collect();
            (Cli::try_parse_from(argv), name.to_owned())
        })
        .collect()
}

fn check(procfile: &str, nodes: usize) {
    let replicas = replicas(procfile);
    assert_eq!(replicas.len(), nodes);
    let mut clusters = Vec::new();
    for (index, (cli, name)) in replicas.into_iter().enumerate() {
        let Command::Serve(args) = cli.unwrap().command else {
            panic!("{name} is not `apiary serve`");
        };
        let config = ServeConfig::from_args(&args).unwrap();
        assert_eq!(config.name, name);
        assert_eq!(config.id, u64::try_from(index + 1).unwrap());
        let expected = ports(6443, index);
        assert_eq!(args.listen_api.port(), expected.api);
        assert_eq!(args.listen_peer.port(), expected.peer);
        assert_eq!(
            config.initial_cluster[&config.id],
            format!("https://{}", args.listen_peer)
        );
        clusters.push(config.initial_cluster);
    }
    assert!(clusters.windows(2).all(|w| w[0] == w[1]));
}

// R-HA-012: the 3- and 5-replica deployments are valid and consistent.
#[test]
fn procfiles_describe_consistent_clusters() {
    check(include_str!("../../deploy/local/Procfile"), 3);
    check(include_str!("../../deploy/local/Procfile.5"), 5);
}

/// The subcommands an operator runs by hand (`serve` and `dev` lines are checked above).
const OPERATOR_COMMANDS: [&str; 4] = ["certs", "member", "status", "snapshot"];

/// Every `apiary` command a document shows: inline code spans and code-block lines (with their
/// `\` continuations) that start with `apiary `.
fn documented_commands(text: &str) -> Vec<String> {
    let mut commands: Vec<String> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("apiary ") && !span.contains('\n'))
        .map(str::to_owned)
        .collect();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut command = line.trim().to_owned();
        if !command.starts_with("apiary ") {
            continue;
        }
        while let Some(head) = command.strip_suffix('\\') {
            command = format!("{head} {}", lines.next().unwrap_or_default().trim());
        }
        commands.push(command);
    }
    commands
}

// Every operator command the runbooks and READMEs show is one the binary takes as written, so
// a renamed subcommand or flag fails here rather than in an operator's hands.
#[test]
fn documented_operator_commands_parse() {
    let documents = [
        ("README.md", include_str!("../../README.md")),
        ("deploy/README.md", include_str!("../../deploy/README.md")),
        (
            "upgrade.md",
            include_str!("../../deploy/runbooks/upgrade.md"),
        ),
        (
            "rollback.md",
            include_str!("../../deploy/runbooks/rollback.md"),
        ),
        (
            "replace-member.md",
            include_str!("../../deploy/runbooks/replace-member.md"),
        ),
        (
            "backup-restore.md",
            include_str!("../../deploy/runbooks/backup-restore.md"),
        ),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (name, text) in documents {
        for command in documented_commands(text) {
            let argv: Vec<&str> = command.split_whitespace().collect();
            if !argv.get(1).is_some_and(|s| OPERATOR_COMMANDS.contains(s)) {
                continue;
            }
            // `apiary member add`, in prose, names a command without its arguments: its
            // words and flags must exist.
            let parsed = match Cli::try_parse_from(&argv) {
                Err(e) if e.kind() == ErrorKind::MissingRequiredArgument => {
                    match Cli::try_parse_from(argv.iter().copied().chain(["--help"])) {
                        Err(e) if e.kind() == ErrorKind::DisplayHelp => Ok(()),
                        other => other.map(drop),
                    }
                }
                other => other.map(drop),
            };
            if let Err(error) = parsed {
                panic!("{name}: `{command}` does not parse:\n{error}");
            }
            if let Some(subcommand) = argv.get(1) {
                seen.insert(subcommand.to_string());
            }
        }
    }
    for wanted in OPERATOR_COMMANDS {
        assert!(seen.contains(wanted), "no document shows `apiary {wanted}`");
    }
}
