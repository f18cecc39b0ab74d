//! Scenario `namespace_deletion_under_faults` (R-RES-015, R-RES-061; issue 19 items 2 and 6):
//! three replicas; namespaces with config maps (one held by a finalizer in each) are deleted
//! through followers while the leader, which runs the namespace controller, crashes and
//! restarts and then the next leader is partitioned away and healed, while late creates race
//! the deletion; the client then removes the finalizers. Every deleted namespace must end up gone, and on every replica nothing may
//! outlive its namespace, while the namespace that was not deleted keeps every object.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use apiary_node::error::error_chain;
use bytes::Bytes;
use http::Method;
use serde_json::Value;
use serde_json::json;

use crate::check::Violation;
use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::cluster::api_url;
use crate::cluster::replica_host;
use crate::fault::Faults;
use crate::fault::HostFault;
use crate::net::CallError;
use crate::net::send;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::phases::agreed_leader;
use crate::scenario::runner::run_with_client;

/// The scenario's name, as its test is named.
pub const NAMESPACE_DELETION: &str = "namespace_deletion_under_faults";

/// The namespaces deleted, and the one kept.
const DOOMED: [&str; 2] = ["doomed-0", "doomed-1"];
const KEPT: &str = "kept";
/// Config maps per namespace; the first is held by [`HOLD`].
const PER_NAMESPACE: usize = 4;
const HOLD: &str = "example.com/hold";

/// How long a phase may take (elections, the controller's passes).
const PHASE_BOUND: Duration = Duration::from_secs(30);
/// A call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
/// The pause between two attempts.
const PAUSE: Duration = Duration::from_millis(100);
/// How long the next leader stays partitioned.
const PARTITION: Duration = Duration::from_secs(2);

/// The guarantee the checks below name.
const GUARANTEE: &str = "namespace_deletion";

/// Runs the scenario with `seed`.
pub fn namespace_deletion_under_faults(seed: u64) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions::new(seed);
    run_with_client(&options, move |hosts, faults| drive(seed, hosts, faults)).map_err(|error| {
        ScenarioFailure {
            scenario: NAMESPACE_DELETION,
            seed,
            error,
        }
    })
}

/// One JSON request to `host`; the answer's object.
async fn request(
    method: Method,
    host: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<Value, CallError> {
    let body = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
    let answer = send(
        method,
        &api_url(host),
        path,
        "application/json",
        body,
        CALL_DEADLINE,
    )
    .await?;
    Ok(serde_json::from_slice(&answer).unwrap_or(Value::Null))
}

/// The HTTP status of a failed call, if the server answered.
fn status_of(error: &CallError) -> Option<u16> {
    match error {
        CallError::Status { status, .. } => Some(status.as_u16()),
        _ => None,
    }
}

/// Sends `method path body` through `hosts` in turn until one answers 2xx or a status in
/// `done`, within [`PHASE_BOUND`]; the answer (`Null` for an accepted error status).
async fn until_done(
    hosts: &[String],
    method: Method,
    path: &str,
    body: Option<&Value>,
    done: &[u16],
) -> Result<Value, ScenarioError> {
    let start = now();
    let mut last = String::new();
    for attempt in 0.. {
        let host = &hosts[attempt % hosts.len()];
        match request(method.clone(), host, path, body).await {
            Ok(answer) => return Ok(answer),
            Err(error) if status_of(&error).is_some_and(|s| done.contains(&s)) => {
                return Ok(Value::Null);
            }
            Err(error) => last = format!("{host}: {}", error_chain(&error)),
        }
        if now().saturating_sub(start) > PHASE_BOUND {
            break;
        }
        tokio::time::sleep(PAUSE).await;
    }
    Err(ScenarioError::Stuck {
        phase: format!("{method} {path}"),
        bound: PHASE_BOUND,
        last,
    })
}

fn configmaps(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

async fn drive(seed: u64, hosts: Vec<String>, faults: Faults) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: create namespaces and their config maps");
    let leader_id = agreed_leader(client, &hosts, None, PHASE_BOUND).await?;
    let leader = replica_host(leader_id);
    for ns in DOOMED.iter().chain([&KEPT]) {
        let body = json!({"metadata": {"name": ns}});
        until_done(
            &hosts,
            Method::POST,
            "/api/v1/namespaces",
            Some(&body),
            &[409],
        )
        .await?;
        for i in 0..PER_NAMESPACE {
            let mut body = json!({"metadata": {"name": format!("c{i}")}, "data": {"v": "1"}});
            if i == 0 {
                body["metadata"]["finalizers"] = json!([HOLD]);
            }
            until_done(&hosts, Method::POST, &configmaps(ns), Some(&body), &[409]).await?;
        }
    }
    let kept_uids = uids(&hosts, KEPT).await?;

    tracing::info!(seed, %leader, "phase: delete through followers, crash the leader");
    let followers: Vec<String> = hosts.iter().filter(|h| **h != leader).cloned().collect();
    for (ns, host) in DOOMED.iter().zip(followers.iter().cycle()) {
        let path = format!("/api/v1/namespaces/{ns}");
        until_done(
            std::slice::from_ref(host),
            Method::DELETE,
            &path,
            None,
            &[409],
        )
        .await?;
    }
    // Late creates through every replica race the deletion: refused (403) or, when a replica
    // had not seen the deletion yet, created and then deleted with the rest.
    let mut late = 0;
    for ns in DOOMED {
        for host in &hosts {
            let body = json!({"metadata": {"name": format!("late-{host}")}, "data": {}});
            if request(Method::POST, host, &configmaps(ns), Some(&body))
                .await
                .is_ok()
            {
                late += 1;
            }
        }
    }
    notes.push(format!("{late} late creates accepted while deleting"));
    tokio::time::sleep(Duration::from_millis(seed % 300)).await;
    faults.inject(HostFault::Crash(leader.clone())).await;
    let next_id = agreed_leader(client, &followers, Some(leader_id), PHASE_BOUND).await?;
    let next = replica_host(next_id);
    faults.inject(HostFault::Restart(leader.clone())).await;
    notes.push(format!("crashed the leader {leader}; next leader {next}"));

    tracing::info!(seed, %next, "phase: partition the next leader, heal");
    tokio::time::sleep(Duration::from_millis(seed % 500)).await;
    for other in hosts.iter().filter(|h| **h != next) {
        turmoil::partition(next.as_str(), other.as_str());
    }
    tokio::time::sleep(PARTITION).await;
    for other in hosts.iter().filter(|h| **h != next) {
        turmoil::repair(next.as_str(), other.as_str());
    }

    tracing::info!(
        seed,
        "phase: release the held config maps, wait for the namespaces to go"
    );
    for ns in DOOMED {
        release(&hosts, ns).await?;
    }
    for ns in DOOMED {
        wait_gone(&hosts, ns).await?;
    }

    tracing::info!(seed, "phase: check every replica");
    let mut violations = Vec::new();
    for host in &hosts {
        check_replica(host, &kept_uids, &mut violations).await?;
    }
    if !violations.is_empty() {
        return Err(ScenarioError::Violations(violations));
    }
    notes.push(format!(
        "{} namespaces emptied and removed; nothing outlived them on {} replicas",
        DOOMED.len(),
        hosts.len()
    ));
    Ok(Report {
        scenario: NAMESPACE_DELETION,
        seed,
        notes,
        elapsed: now(),
        history_hash: client.take_history().fingerprint(),
        relists: 0,
    })
}

/// The uid of every config map in `ns`, by name.
async fn uids(hosts: &[String], ns: &str) -> Result<BTreeMap<String, String>, ScenarioError> {
    let list = until_done(hosts, Method::GET, &configmaps(ns), None, &[]).await?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let text = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or_default();
            (
                text("/metadata/name").to_owned(),
                text("/metadata/uid").to_owned(),
            )
        })
        .collect())
}

/// Removes [`HOLD`] from the held config map of `ns` (gone already is fine).
async fn release(hosts: &[String], ns: &str) -> Result<(), ScenarioError> {
    let path = format!("{}/c0", configmaps(ns));
    let start = now();
    loop {
        let object = until_done(hosts, Method::GET, &path, None, &[404]).await?;
        if object.is_null() {
            return Ok(());
        }
        let mut released = object.clone();
        released["metadata"]["finalizers"] = json!([]);
        if until_done(hosts, Method::PUT, &path, Some(&released), &[404, 409])
            .await?
            .is_object()
        {
            return Ok(());
        }
        if now().saturating_sub(start) > PHASE_BOUND {
            return Err(ScenarioError::Stuck {
                phase: format!("releasing {path}"),
                bound: PHASE_BOUND,
                last: "conflicts".to_owned(),
            });
        }
    }
}

/// Waits until namespace `ns` is gone (404 on a quorum read).
async fn wait_gone(hosts: &[String], ns: &str) -> Result<(), ScenarioError> {
    let path = format!("/api/v1/namespaces/{ns}");
    let start = now();
    loop {
        let state = until_done(hosts, Method::GET, &path, None, &[404]).await?;
        if state.is_null() {
            return Ok(());
        }
        if now().saturating_sub(start) > PHASE_BOUND {
            return Err(ScenarioError::Stuck {
                phase: format!("removal of namespace {ns}"),
                bound: PHASE_BOUND,
                last: state["status"].to_string(),
            });
        }
        tokio::time::sleep(PAUSE).await;
    }
}

/// On `host`: every config map's namespace exists, the deleted namespaces are gone, and the
/// kept namespace has every config map it had, with the same uids.
async fn check_replica(
    host: &str,
    kept: &BTreeMap<String, String>,
    violations: &mut Vec<Violation>,
) -> Result<(), ScenarioError> {
    let hosts = [host.to_owned()];
    let namespaces = until_done(&hosts, Method::GET, "/api/v1/namespaces", None, &[]).await?;
    let present: BTreeSet<&str> = namespaces["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.pointer("/metadata/name").and_then(Value::as_str))
        .collect();
    for ns in DOOMED {
        if present.contains(ns) {
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!("{host}: namespace {ns} still exists"),
            });
        }
    }
    let all = until_done(&hosts, Method::GET, "/api/v1/configmaps", None, &[]).await?;
    for object in all["items"].as_array().into_iter().flatten() {
        let ns = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !present.contains(ns) {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!("{host}: config map {ns}/{name} outlived its namespace"),
            });
        }
    }
    let now_kept = uids(&hosts, KEPT).await?;
    if now_kept != *kept {
        violations.push(Violation {
            guarantee: GUARANTEE,
            detail: format!("{host}: namespace {KEPT} had {kept:?}, now {now_kept:?}"),
        });
    }
    Ok(())
}
