//! The simulation runner: replays one scenario seed (`--seed S`), or runs a range of seeds
//! (`--seed S --count N`) to look for new failures; stops at the first failure and prints how to
//! reproduce it. `RUST_LOG=info` shows what the replicas did, stamped with virtual time;
//! `--trace` prints each run's [`apiary_sim::trace::TraceDigest`] instead (equal for two runs of
//! one seed; `APIARY_SIM_TRACE_FILE=path` also writes the hashed events, to `diff` two runs).

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
    /// Print a digest of every event the replicas logged (replaces the `RUST_LOG` output).
    #[arg(long)]
    trace: bool,
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
        let (result, digest) = if args.trace {
            let (result, digest) = apiary_sim::trace::record(|| run(seed));
            (result, Some(digest))
        } else {
            (run(seed), None)
        };
        match result {
            Ok(report) => {
                println!(
                    "{} seed {seed}: ok in {:?} of virtual time",
                    report.scenario, report.elapsed
                );
                if let Some(digest) = digest {
                    println!(
                        "  trace: {digest}; history hash {:016x}",
                        report.history_hash
                    );
                }
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
