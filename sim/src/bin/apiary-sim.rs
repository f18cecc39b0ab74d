//! The simulation runner: replays one scenario seed (`--seed S`), or runs a range of seeds
//! (`--seed S --count N`) to look for new failures; stops at the first failure and prints how to
//! reproduce it. `RUST_LOG=info` shows what the replicas did, stamped with virtual time.

use std::process::ExitCode;

use apiary_sim::scenario;
use clap::Parser;

/// Runs Apiary cluster simulations.
#[derive(Debug, Parser)]
#[command(name = "apiary-sim")]
struct Args {
    /// The scenario to run.
    #[arg(long, default_value = scenario::LEADER_PARTITIONED)]
    scenario: String,
    /// The (first) seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many consecutive seeds to run, from `--seed` on.
    #[arg(long, default_value_t = 1)]
    count: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    apiary_sim::logging::init_logging();
    let Some(run) = scenario::by_name(&args.scenario) else {
        let known: Vec<&str> = scenario::ALL.iter().map(|(name, _)| *name).collect();
        eprintln!(
            "unknown scenario {:?}; known: {}",
            args.scenario,
            known.join(", ")
        );
        return ExitCode::FAILURE;
    };
    for seed in (args.seed..).take_while(|s| s - args.seed < args.count) {
        match run(seed) {
            Ok(report) => {
                println!(
                    "{} seed {seed}: ok in {:?} of virtual time",
                    report.scenario, report.elapsed
                );
                for note in &report.notes {
                    println!("  {note}");
                }
            }
            Err(failure) => {
                eprintln!("{failure}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
