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
