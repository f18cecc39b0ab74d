//! The rows the read benchmark measures, and the markdown table that puts Apiary and etcd side
//! by side: etcd's native gRPC figures (the ratio's baseline), and its JSON gateway's beside.

use std::fmt::Write as _;
use std::time::Duration;

use apiary_tests::load::LevelResult;

/// Which system a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    Apiary,
    /// etcd through its native gRPC API (and etcd's memory, whatever the API).
    Etcd,
    /// etcd through its JSON gateway.
    EtcdGateway,
}

/// What a row holds.
#[derive(Debug, Clone)]
pub enum Measure {
    /// Latency percentiles, with the number of failed samples.
    Latency {
        p50: Option<Duration>,
        p99: Option<Duration>,
        errors: u64,
    },
    /// Resident memory in MiB.
    Memory { mib: f64 },
}

/// One measured figure.
#[derive(Debug, Clone)]
pub struct Row {
    pub system: System,
    pub workload: String,
    pub measure: Measure,
    /// The workload of the etcd rows this one is compared with, when not its own (another
    /// wire format of the same list).
    pub baseline: Option<String>,
}

impl Row {
    /// A latency row from a load level.
    pub fn latency(system: System, workload: String, level: &LevelResult) -> Self {
        println!(
            "{system:?} {workload}: n={} errors={} p50={} p99={}{}",
            level.ok,
            level.errors,
            ms(level.percentile(50.0)),
            ms(level.percentile(99.0)),
            level
                .first_error
                .as_deref()
                .map(|e| format!(" first error: {e}"))
                .unwrap_or_default()
        );
        Self {
            system,
            workload,
            measure: Measure::Latency {
                p50: level.percentile(50.0),
                p99: level.percentile(99.0),
                errors: level.errors,
            },
            baseline: None,
        }
    }

    /// A memory row.
    pub fn memory(system: System, workload: String, mib: f64) -> Self {
        println!("{system:?} {workload}: {mib:.0} MiB");
        Self {
            system,
            workload,
            measure: Measure::Memory { mib },
            baseline: None,
        }
    }

    /// The row compared with etcd's rows of `workload`.
    pub fn against(mut self, workload: String) -> Self {
        self.baseline = Some(workload);
        self
    }
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("-".to_owned(), |d| {
        format!("{:.1}ms", d.as_secs_f64() * 1000.0)
    })
}

fn cells(row: Option<&Row>) -> (String, String) {
    match row.map(|r| &r.measure) {
        Some(Measure::Latency {
            p50, p99, errors, ..
        }) => {
            let err = if *errors > 0 {
                format!(" ({errors} err)")
            } else {
                String::new()
            };
            (format!("{}{err}", ms(*p50)), ms(*p99))
        }
        Some(Measure::Memory { mib }) => (format!("{mib:.0} MiB"), String::new()),
        None => ("-".to_owned(), "-".to_owned()),
    }
}

/// Apiary's figure over etcd's (p50 for latencies), when both exist.
fn ratio(apiary: Option<&Row>, etcd: Option<&Row>) -> String {
    let value = |r: Option<&Row>| match r.map(|r| &r.measure) {
        Some(Measure::Latency { p50: Some(p), .. }) => Some(p.as_secs_f64()),
        Some(Measure::Memory { mib }) => Some(*mib),
        _ => None,
    };
    match (value(apiary), value(etcd)) {
        (Some(a), Some(e)) if e > 0.0 => format!("{:.2}", a / e),
        _ => "-".to_owned(),
    }
}

/// The markdown table: one line per workload, Apiary and etcd side by side.
pub fn table(rows: &[Row]) -> String {
    let mut workloads: Vec<&str> = Vec::new();
    for r in rows {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| workload | Apiary p50 | Apiary p99 | etcd gRPC p50 | etcd gRPC p99 | etcd gateway p50 | etcd gateway p99 | Apiary/etcd gRPC (p50 or MiB) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for w in workloads {
        let find = |s, w: &str| rows.iter().find(|r| r.system == s && r.workload == w);
        let a = find(System::Apiary, w);
        let etcd_w = a.and_then(|a| a.baseline.as_deref()).unwrap_or(w);
        let e = find(System::Etcd, etcd_w);
        let (a50, a99) = cells(a);
        let (e50, e99) = cells(e);
        let (g50, g99) = cells(find(System::EtcdGateway, etcd_w));
        let _ = writeln!(
            out,
            "| {w} | {a50} | {a99} | {e50} | {e99} | {g50} | {g99} | {} |",
            ratio(a, e)
        );
    }
    out
}
