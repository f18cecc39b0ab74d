//! The `apiary` binary: parses the command line and hands over to the library
//! ([`apiary_node::serve`] for one replica, [`apiary_node::dev::run_dev`] for a local cluster,
//! [`apiary_node::certs::run_certs`] for a cluster's certificates).

use std::process::ExitCode;

use apiary_node::cli::Cli;
use apiary_node::cli::Command;
use clap::Parser;

/// The name of the main runtime's threads, which serve the HTTP API (raft has its own,
/// [`apiary_node::raft_runtime`]).
const API_THREAD_NAME: &str = "apiary-api";

fn main() -> ExitCode {
    let cli = Cli::parse();
    apiary_node::logging::init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name(API_THREAD_NAME)
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("apiary: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => apiary_node::serve(args).await,
            Command::Dev(args) => apiary_node::dev_main(args).await,
            Command::Member(args) => Ok(apiary_node::ctl::member::run(args).await?),
            Command::Status(args) => Ok(apiary_node::ctl::status::run(args).await?),
            Command::Snapshot(args) => apiary_node::ctl::snapshot::run(args)
                .await
                .map_err(Into::into),
            Command::Certs(args) => apiary_node::certs::run_certs(&args).map_err(Into::into),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("apiary: {}", apiary_node::error_chain(&error));
            ExitCode::FAILURE
        }
    }
}
