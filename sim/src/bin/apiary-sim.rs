//! The simulation runner: replays one scenario seed (`--seed S`), or runs `--seeds N` seeds from
//! `--seed` on to look for new failures, of one scenario (`--scenario NAME`) or of every one;
//! stops at the first failure and prints how to reproduce it. `--reproduce S` replays seed S
//! and, if it fails, writes the failure, the history and the trace of the run to a file in the
//! current directory. `RUST_LOG=info` shows what the replicas did, stamped with virtual time;
//! `--trace` prints each run's [`apiary_sim::trace::TraceDigest`] instead (equal for two runs of
//! one seed; `APIARY_SIM_TRACE_FILE=path` also writes the hashed events, to `diff` two runs).
//! `--plant-bug NAME` builds every replica with a deliberate defect ([`PlantedBug`]): the run
//! must fail, which proves the checkers and this failing path.

use std::path::PathBuf;
use std::process::ExitCode;

use apiary_sim::planted::PlantedBug;
use apiary_sim::planted::planted;
use apiary_sim::planted::with_planted;
use apiary_sim::scenario;
use apiary_sim::scenario::Report;
use apiary_sim::scenario::ScenarioFailure;
use apiary_sim::scenario::ScenarioFn;
use apiary_sim::trace::TraceDigest;
use clap::Parser;

/// Runs Apiary cluster simulations.
#[derive(Debug, Parser)]
#[command(name = "apiary-sim")]
struct Args {
    /// The scenario to run (every scenario when not given).
    #[arg(long)]
    scenario: Option<String>,
    /// The (first) seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many consecutive seeds to run, from `--seed` on.
    #[arg(long, alias = "count", default_value_t = 1)]
    seeds: u64,
    /// Replay this one seed; if it fails, write its failure, history and trace to a file in the
    /// current directory and print the file's path.
    #[arg(long, conflicts_with_all = ["seed", "seeds"])]
    reproduce: Option<u64>,
    /// Print a digest of every event the replicas logged (replaces the `RUST_LOG` output).
    #[arg(long)]
    trace: bool,
    /// Build every replica with this bug (`stale-quorum-reads`), to see the checkers catch it.
    #[arg(long)]
    plant_bug: Option<PlantedBug>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    apiary_sim::logging::init_logging();
    with_planted(args.plant_bug, || run(&args))
}

fn run(args: &Args) -> ExitCode {
    let scenarios: Vec<(&'static str, ScenarioFn)> = match &args.scenario {
        None => scenario::ALL.to_vec(),
        Some(name) => match scenario::ALL.iter().find(|(n, _)| n == name) {
            Some(found) => vec![*found],
            None => {
                let known: Vec<&str> = scenario::ALL.iter().map(|(name, _)| *name).collect();
                eprintln!("unknown scenario {name:?}; known: {}", known.join(", "));
                return ExitCode::FAILURE;
            }
        },
    };
    if let Some(seed) = args.reproduce {
        return reproduce(&scenarios, seed);
    }
    for seed in (args.seed..).take_while(|s| s - args.seed < args.seeds) {
        for (_, run) in &scenarios {
            let (result, digest) = if args.trace {
                let (result, digest) = apiary_sim::trace::record(|| run(seed));
                (result, Some(digest))
            } else {
                (run(seed), None)
            };
            match result {
                Ok(report) => print_report(&report, digest),
                Err(failure) => {
                    report_failure(&failure);
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// Prints the failure with its reproduce commands, which need the planted bug too if any.
fn report_failure(failure: &ScenarioFailure) {
    eprintln!("{failure}");
    if let Some(bug) = planted() {
        eprintln!(
            "PLANTED BUG: {bug} (add `--plant-bug {bug}` to the runner command to reproduce)"
        );
    }
}

fn print_report(report: &Report, digest: Option<TraceDigest>) {
    println!(
        "{} seed {}: ok in {:?} of virtual time",
        report.scenario, report.seed, report.elapsed
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

/// Runs `seed` of every scenario in `scenarios` with its trace recorded; writes each failing
/// run to `apiary-sim-<scenario>-seed-<seed>.txt`: the failure, then every event of the run in
/// virtual-time order, the history among them (`apiary_sim::history` lines: every write and
/// quorum read with its outcome; `apiary_sim::watch` lines: every watch entry).
fn reproduce(scenarios: &[(&'static str, ScenarioFn)], seed: u64) -> ExitCode {
    let mut failed = false;
    for (name, run) in scenarios {
        let path = PathBuf::from(format!("apiary-sim-{name}-seed-{seed}.txt"));
        let (result, digest) = apiary_sim::trace::record_into(Some(path.clone()), || run(seed));
        match result {
            Ok(report) => {
                print_report(&report, Some(digest));
                // Nothing to keep: the file is only for failing runs.
                if let Err(error) = std::fs::remove_file(&path) {
                    eprintln!("could not remove {}: {error}", path.display());
                }
            }
            Err(failure) => {
                failed = true;
                report_failure(&failure);
                match prepend_failure(&path, &failure, digest) {
                    Ok(()) => eprintln!("HISTORY AND TRACE: {}", absolute(&path).display()),
                    Err(error) => eprintln!("could not write {}: {error}", path.display()),
                }
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Puts the failure and the trace's digest at the top of the trace file.
fn prepend_failure(
    path: &PathBuf,
    failure: &ScenarioFailure,
    digest: TraceDigest,
) -> std::io::Result<()> {
    let trace = std::fs::read_to_string(path)?;
    let text = format!("{failure}\ntrace: {digest}\n\n{trace}");
    std::fs::write(path, text)
}

fn absolute(path: &PathBuf) -> PathBuf {
    std::env::current_dir()
        .map(|dir| dir.join(path))
        .unwrap_or_else(|_| path.clone())
}
