//! The `apiary` binary: parses the command line and hands over to the library
//! ([`apiary_node::serve`] for one replica, [`apiary_node::dev::run_dev`] for a local cluster).

use std::io::IsTerminal;
use std::process::ExitCode;

use apiary_node::cli::Cli;
use apiary_node::cli::Command;
use clap::Parser;

/// Log filter when `RUST_LOG` is unset: openraft reports every vote and term change at info.
const DEFAULT_LOG_FILTER: &str = "info,openraft=warn";

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER)),
        )
        .with_writer(std::io::stderr)
        // Replica logs usually go to files (`apiary dev`): colour codes only on a terminal.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
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
