//! The fault script of the mixed-fault scenarios: the seed draws 3–6 fault events (partitions of
//! the leader or of a replica, one-way partitions, slow, lossy or held links, crashes of a
//! replica or of the leader, clock skew), applied one at a time, each lasting 0.5–2 s and healed
//! before a calm stretch; the script reports when replicas were cut off from all others (no
//! write sent to them meanwhile may be acknowledged).

use std::fmt;
use std::time::Duration;

use chrono::TimeDelta;
use rand::Rng;
use rand::rngs::StdRng;

use crate::client::SimClient;
use crate::client::now;
use crate::cluster::replica_host;
use crate::fault::Faults;
use crate::fault::HostFault;
use crate::scenario::ScenarioError;
use crate::scenario::phases::agreed_leader;
use crate::scenario::verdict::Isolation;

/// How long the agreement on a leader before a leader-targeted fault may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// Writes before the first fault, and after each heal.
const CALM: Duration = Duration::from_millis(500);
/// How many fault events a run has, at least and at most.
const MIN_EVENTS: u32 = 3;
const MAX_EVENTS: u32 = 6;
/// How long one fault lasts, in milliseconds, at least and at most.
const MIN_FAULT_MS: u64 = 500;
const MAX_FAULT_MS: u64 = 2_000;
/// The upper bound of a message's latency on a slowed link, in milliseconds.
const MIN_SLOW_MS: u64 = 50;
const MAX_SLOW_MS: u64 = 300;
/// The probability that one message on a lossy link breaks it, at least and at most.
const MIN_LOSS: f64 = 0.02;
const MAX_LOSS: f64 = 0.2;
/// How far a skewed clock is off, at most, in seconds (either way).
const MAX_SKEW_SECS: i64 = 600;

/// One fault event, drawn from the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FaultKind {
    /// The leader cut off from every other replica.
    LeaderPartition,
    /// A random replica cut off from every other replica.
    ReplicaPartition,
    /// A random replica's messages to (or from) every other replica dropped, the other
    /// direction intact.
    OneWayPartition { outgoing: bool },
    /// Messages between a random replica and every other host delayed.
    Latency,
    /// A random replica's host crashed (power loss) and restarted.
    CrashRestart,
    /// Messages between a random replica and every other replica held, then delivered at once.
    Hold,
    /// The leader's host crashed (power loss) and restarted: a leader kill.
    LeaderCrash,
    /// Messages between a random replica and every other host lost at random.
    Loss,
    /// A random replica's wall clock set minutes or seconds ahead or behind.
    ClockSkew,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LeaderPartition => write!(f, "leader partition"),
            Self::ReplicaPartition => write!(f, "replica partition"),
            Self::OneWayPartition { outgoing: true } => write!(f, "one-way partition (outgoing)"),
            Self::OneWayPartition { outgoing: false } => write!(f, "one-way partition (incoming)"),
            Self::Latency => write!(f, "latency"),
            Self::CrashRestart => write!(f, "crash and restart"),
            Self::Hold => write!(f, "hold and release"),
            Self::LeaderCrash => write!(f, "leader crash and restart"),
            Self::Loss => write!(f, "message loss"),
            Self::ClockSkew => write!(f, "clock skew"),
        }
    }
}

impl FaultKind {
    fn draw(rng: &mut StdRng) -> Self {
        match rng.random_range(0..10) {
            0 => Self::LeaderPartition,
            1 => Self::ReplicaPartition,
            2 => Self::OneWayPartition { outgoing: true },
            3 => Self::OneWayPartition { outgoing: false },
            4 => Self::Latency,
            5 => Self::CrashRestart,
            6 => Self::Hold,
            7 => Self::LeaderCrash,
            8 => Self::Loss,
            _ => Self::ClockSkew,
        }
    }
}

/// Applies 3–6 fault events drawn from `rng`, each lasting 0.5–2 s and healed before a calm
/// stretch, and returns when replicas were cut off from all others.
pub(crate) async fn faults_script(
    client: &SimClient,
    hosts: &[String],
    faults: &Faults,
    normal_latency: Duration,
    mut rng: StdRng,
    notes: &mut Vec<String>,
) -> Result<Vec<Isolation>, ScenarioError> {
    let mut isolations = Vec::new();
    let events = rng.random_range(MIN_EVENTS..=MAX_EVENTS);
    tokio::time::sleep(CALM).await;
    for _ in 0..events {
        let kind = FaultKind::draw(&mut rng);
        let lasts = Duration::from_millis(rng.random_range(MIN_FAULT_MS..=MAX_FAULT_MS));
        let target = match kind {
            FaultKind::LeaderPartition | FaultKind::LeaderCrash => {
                replica_host(agreed_leader(client, hosts, None, ELECTION_BOUND).await?)
            }
            _ => hosts[rng.random_range(0..hosts.len())].clone(),
        };
        let others: Vec<&str> = hosts
            .iter()
            .map(String::as_str)
            .filter(|h| *h != target)
            .collect();
        let from = now();
        tracing::info!(%kind, %target, ?lasts, "fault");
        notes.push(format!("{kind} of {target} at {from:?} for {lasts:?}"));
        match kind {
            FaultKind::LeaderPartition | FaultKind::ReplicaPartition => {
                for other in &others {
                    turmoil::partition(target.as_str(), *other);
                }
                tokio::time::sleep(lasts).await;
                for other in &others {
                    turmoil::repair(target.as_str(), *other);
                }
                isolations.push(Isolation {
                    replica: target.clone(),
                    from,
                    until: now(),
                });
            }
            FaultKind::OneWayPartition { outgoing } => {
                for other in &others {
                    let (a, b) = if outgoing {
                        (target.as_str(), *other)
                    } else {
                        (*other, target.as_str())
                    };
                    turmoil::partition_oneway(a, b);
                }
                tokio::time::sleep(lasts).await;
                for other in &others {
                    let (a, b) = if outgoing {
                        (target.as_str(), *other)
                    } else {
                        (*other, target.as_str())
                    };
                    turmoil::repair_oneway(a, b);
                }
            }
            FaultKind::Latency => {
                let max = Duration::from_millis(rng.random_range(MIN_SLOW_MS..=MAX_SLOW_MS));
                let slow = HostFault::Latency {
                    host: target.clone(),
                    max,
                };
                faults.inject(slow).await;
                tokio::time::sleep(lasts).await;
                let normal = HostFault::Latency {
                    host: target.clone(),
                    max: normal_latency,
                };
                faults.inject(normal).await;
            }
            FaultKind::CrashRestart | FaultKind::LeaderCrash => {
                faults.inject(HostFault::Crash(target.clone())).await;
                tokio::time::sleep(lasts).await;
                faults.inject(HostFault::Restart(target.clone())).await;
            }
            FaultKind::Hold => {
                for other in &others {
                    turmoil::hold(target.as_str(), *other);
                }
                tokio::time::sleep(lasts).await;
                for other in &others {
                    turmoil::release(target.as_str(), *other);
                }
            }
            FaultKind::Loss => {
                let rate = rng.random_range(MIN_LOSS..=MAX_LOSS);
                let host = target.clone();
                faults.inject(HostFault::Loss { host, rate }).await;
                tokio::time::sleep(lasts).await;
                let host = target.clone();
                faults.inject(HostFault::Loss { host, rate: 0.0 }).await;
            }
            FaultKind::ClockSkew => {
                let seconds = rng.random_range(1..=MAX_SKEW_SECS);
                let sign = if rng.random_bool(0.5) { 1 } else { -1 };
                let offset = TimeDelta::seconds(sign * seconds);
                let host = target.clone();
                faults.inject(HostFault::ClockSkew { host, offset }).await;
                tokio::time::sleep(lasts).await;
                let host = target.clone();
                let offset = TimeDelta::zero();
                faults.inject(HostFault::ClockSkew { host, offset }).await;
            }
        }
        tokio::time::sleep(CALM).await;
    }
    notes.push(format!("{events} fault events"));
    Ok(isolations)
}
