//! The runner's two paths end to end (R-HA-013): a seed that fails (the replicas built with a
//! planted stale-read bug) exits non-zero, prints the commands that reproduce it, and
//! `--reproduce` writes the failure, the history and the trace to a file; the same seed without
//! the bug passes and leaves no file.

use std::path::Path;
use std::process::Command;
use std::process::Output;

const SCENARIO: &str = "leader_partitioned_writes_resume_on_majority";
const FILE: &str = "apiary-sim-leader_partitioned_writes_resume_on_majority-seed-1.txt";

/// Runs the runner in `dir` with `args` (and no `RUST_LOG`, so stderr holds only the verdict).
fn runner(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apiary-sim"))
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .expect("the runner starts")
}

// R-HA-013, R-HA-004, R-HA-005
#[test]
fn a_failing_seed_prints_its_reproduce_commands_and_writes_history_and_trace() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let output = runner(
        dir.path(),
        &[
            "--scenario",
            SCENARIO,
            "--reproduce",
            "1",
            "--plant-bug",
            "stale-quorum-reads",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "a stale read must fail the run:\n{stderr}"
    );
    for expected in [
        "scenario leader_partitioned_writes_resume_on_majority failed with seed 1",
        "reads_see_acked_writes: replica-",
        "REPRODUCE WITH: APIARY_SIM_SEED=1 cargo test -p apiary-sim --test scenarios -- \
         leader_partitioned_writes_resume_on_majority --exact",
        "--scenario leader_partitioned_writes_resume_on_majority --reproduce 1",
        "add `--plant-bug stale-quorum-reads`",
        "HISTORY AND TRACE: ",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }

    let path = dir.path().join(FILE);
    let printed = stderr
        .lines()
        .find_map(|line| line.strip_prefix("HISTORY AND TRACE: "))
        .expect("the file is named");
    assert!(printed.ends_with(FILE), "{printed}");
    let written = std::fs::read_to_string(&path).expect("the history and trace file");
    let mut lines = written.lines();
    assert!(
        lines.next().is_some_and(|l| l.starts_with(
            "scenario leader_partitioned_writes_resume_on_majority failed with seed 1"
        )),
        "the file opens with the failure"
    );
    assert!(
        written.contains("\ntrace: "),
        "the trace digest is in the file"
    );
    let history = written
        .lines()
        .filter(|line| line.contains("apiary_sim::history") && line.contains("write=Create"))
        .count();
    assert!(
        history > 10,
        "the history's writes are in the file ({history})"
    );
    assert!(
        written.lines().any(|line| line.contains("apiary_raft")),
        "the replicas' events are in the file"
    );
}

// R-HA-013
#[test]
fn a_passing_seed_reports_and_leaves_no_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let output = runner(dir.path(), &["--scenario", SCENARIO, "--reproduce", "1"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("leader_partitioned_writes_resume_on_majority seed 1: ok"),
        "{stdout}"
    );
    assert!(stdout.contains("trace: "), "{stdout}");
    assert!(
        !dir.path().join(FILE).exists(),
        "a passing run keeps no file"
    );
}
