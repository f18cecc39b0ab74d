//! Scenario `garbage_collection_under_faults` (issue 19 items 3 and 6): owner chains three
//! deep (an owner ConfigMap, two dependents, one of them owning a leaf) are built, then half
//! of the owners are deleted (in the background, the foreground or orphaning, in turn) through
//! random replicas while the seed's fault mix runs (leaders cut off and crashed among it),
//! so the garbage collector's passes are cut short and taken over by new leaders. After the
//! faults heal, every object of a deleted owner's chain must be gone within a bound (nothing
//! outlives its owner; an orphaning owner's dependents lose their reference to it), and
//! every other object must still be there with its uid (nothing else is deleted).

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use http::StatusCode;
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::Value;
use serde_json::json;

use crate::check::Violation;
use crate::client::SimClient;
use crate::client::configmaps_path;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::cluster::api_url;
use crate::fault::Faults;
use crate::net::CallError;
use crate::net::send;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::fault_script::faults_script;
use crate::scenario::phases::agreed_leader;
use crate::scenario::runner::actor_rng as rng;
use crate::scenario::runner::run_with_client;

/// The scenario's name, as its test is named.
pub const GARBAGE_COLLECTION: &str = "garbage_collection_under_faults";

/// Owner chains built; the even ones are deleted.
const OWNERS: usize = 6;
/// ConfigMaps owned by nobody.
const FREE: usize = 3;
/// How long the first election may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long building the chains, or one delete, may take.
const WRITE_BOUND: Duration = Duration::from_secs(20);
/// How long the collector may take to converge once the faults are healed.
const CONVERGE_BOUND: Duration = Duration::from_secs(60);
/// A call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
/// The pause between two attempts.
const PAUSE: Duration = Duration::from_millis(200);

/// Runs the scenario with `seed`.
pub fn garbage_collection_under_faults(seed: u64) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions {
        replicas: 3,
        ..ClusterOptions::new(seed)
    };
    let normal_latency = options.max_latency;
    run_with_client(&options, move |hosts, faults| {
        drive(seed, hosts, faults, normal_latency)
    })
    .map_err(|error| ScenarioFailure {
        scenario: GARBAGE_COLLECTION,
        seed,
        error,
    })
}

/// One call to `host`; `Ok(None)` for 404, the HTTP status otherwise on failure.
async fn call(
    method: Method,
    host: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<Option<Value>, (Option<StatusCode>, String)> {
    let body = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
    let answer = send(
        method,
        &api_url(host),
        path,
        "application/json",
        body,
        CALL_DEADLINE,
    )
    .await;
    match answer {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).unwrap_or(Value::Null))),
        Err(CallError::Status { status, .. }) if status == StatusCode::NOT_FOUND => Ok(None),
        Err(CallError::Status { status, body, .. }) => {
            Err((Some(status), String::from_utf8_lossy(&body).into_owned()))
        }
        Err(error) => Err((None, error.to_string())),
    }
}

/// What one run works with.
struct Run {
    hosts: Vec<String>,
    rng: StdRng,
}

impl Run {
    fn host(&mut self) -> String {
        self.hosts[self.rng.random_range(0..self.hosts.len())].clone()
    }

    /// Creates ConfigMap `name` with `metadata` merged in, through random replicas until it
    /// exists (a create that timed out but took effect is read back); the object.
    async fn ensure(&mut self, name: &str, metadata: Value) -> Result<Value, ScenarioError> {
        let mut meta = json!({"name": name});
        for (k, v) in metadata.as_object().cloned().unwrap_or_default() {
            meta[k] = v;
        }
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta});
        let path = format!("{}/{name}", configmaps_path());
        let start = now();
        loop {
            let host = self.host();
            let last = match call(Method::POST, &host, &configmaps_path(), Some(&body)).await {
                Ok(Some(created)) => return Ok(created),
                Err((Some(StatusCode::CONFLICT), _)) => {
                    match call(Method::GET, &host, &path, None).await {
                        Ok(Some(found)) => return Ok(found),
                        Ok(None) => "conflict, then not found".to_owned(),
                        Err((_, e)) => e,
                    }
                }
                Ok(None) => "404".to_owned(),
                Err((_, e)) => e,
            };
            stuck_after(start, WRITE_BOUND, &format!("creating {name}"), last)?;
            tokio::time::sleep(PAUSE).await;
        }
    }

    /// Deletes ConfigMap `name` with `policy` until a replica acknowledges it or says it is
    /// gone.
    async fn delete(&mut self, name: &str, policy: &str) -> Result<(), ScenarioError> {
        let path = format!("{}/{name}", configmaps_path());
        let options =
            json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy});
        let start = now();
        loop {
            let host = self.host();
            let last = match call(Method::DELETE, &host, &path, Some(&options)).await {
                Ok(_) => return Ok(()),
                Err((_, e)) => e,
            };
            stuck_after(start, WRITE_BOUND, &format!("deleting {name}"), last)?;
            tokio::time::sleep(PAUSE).await;
        }
    }

    /// ConfigMap `name` as a random replica serves it now; `None` when absent.
    async fn read(&mut self, name: &str) -> Result<Option<Value>, String> {
        let path = format!("{}/{name}", configmaps_path());
        call(Method::GET, &self.host(), &path, None)
            .await
            .map_err(|(_, e)| e)
    }

    /// The uid of ConfigMap `name` as a random replica serves it now; `None` when absent.
    async fn uid(&mut self, name: &str) -> Result<Option<String>, String> {
        Ok(self.read(name).await?.map(|o| uid_of(&o)))
    }
}

fn stuck_after(
    start: Duration,
    bound: Duration,
    phase: &str,
    last: String,
) -> Result<(), ScenarioError> {
    if now().saturating_sub(start) > bound {
        return Err(ScenarioError::Stuck {
            phase: phase.to_owned(),
            bound,
            last,
        });
    }
    Ok(())
}

/// How owner `i` is deleted: the odd ones are not; the even ones in the background, the
/// foreground or orphaning their dependents, in turn.
fn policy(i: usize) -> Option<&'static str> {
    match i % 6 {
        0 => Some("Background"),
        2 => Some("Foreground"),
        4 => Some("Orphan"),
        _ => None,
    }
}

fn reference(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block,
    })
}

fn uid_of(object: &Value) -> String {
    object["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn drive(
    seed: u64,
    hosts: Vec<String>,
    faults: Faults,
    normal_latency: Duration,
) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();
    agreed_leader(client, &hosts, None, ELECTION_BOUND).await?;

    tracing::info!(seed, "phase: build the owner chains");
    let mut run = Run {
        hosts: hosts.clone(),
        rng: rng(seed, 500),
    };
    // Name -> uid, of the objects that must go and of those that must stay.
    let (mut doomed, mut kept) = (BTreeMap::new(), BTreeMap::new());
    // The dependents of owners deleted with the Orphan policy: kept, without references.
    let mut orphaned = Vec::new();
    for i in 0..OWNERS {
        let owner = run.ensure(&format!("owner-{i}"), json!({})).await?;
        let blocking = json!({"ownerReferences": [reference(&owner, true)]});
        let a = run.ensure(&format!("dep-{i}-a"), blocking).await?;
        let plain = json!({"ownerReferences": [reference(&owner, false)]});
        let b = run.ensure(&format!("dep-{i}-b"), plain).await?;
        let leaf = run
            .ensure(
                &format!("leaf-{i}"),
                json!({"ownerReferences": [reference(&a, true)]}),
            )
            .await?;
        let name = |o: &Value| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        if policy(i) == Some("Orphan") {
            doomed.insert(name(&owner), uid_of(&owner));
            orphaned.extend([name(&a), name(&b)]);
        }
        let whole_chain = matches!(policy(i), Some("Background" | "Foreground"));
        for object in [&owner, &a, &b, &leaf] {
            let chain = if whole_chain || doomed.contains_key(&name(object)) {
                &mut doomed
            } else {
                &mut kept
            };
            chain.insert(
                object["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                uid_of(object),
            );
        }
    }
    for i in 0..FREE {
        let free = run.ensure(&format!("free-{i}"), json!({})).await?;
        kept.insert(format!("free-{i}"), uid_of(&free));
    }

    tracing::info!(seed, "phase: delete half of the owners under faults");
    let script = faults_script(
        client,
        &hosts,
        &faults,
        normal_latency,
        rng(seed, 300),
        &mut notes,
    );
    let deletes = async {
        for i in 0..OWNERS {
            let pause = Duration::from_millis(run.rng.random_range(200..1_500));
            tokio::time::sleep(pause).await;
            let Some(policy) = policy(i) else {
                continue;
            };
            run.delete(&format!("owner-{i}"), policy).await?;
        }
        Ok::<(), ScenarioError>(())
    };
    let (script, deletes) = tokio::join!(script, deletes);
    script?;
    deletes?;

    tracing::info!(seed, "phase: the collector converges");
    let start = now();
    loop {
        let mut left = Vec::new();
        for (name, uid) in &doomed {
            match run.uid(name).await {
                Ok(Some(found)) if found == *uid => left.push(name.clone()),
                Ok(_) => {}
                Err(e) => left.push(format!("{name} ({e})")),
            }
        }
        for name in &orphaned {
            match run.read(name).await {
                Ok(Some(found)) if found["metadata"]["ownerReferences"].is_null() => {}
                Ok(found) => left.push(format!("{name} not orphaned: {found:?}")),
                Err(e) => left.push(format!("{name} ({e})")),
            }
        }
        if left.is_empty() {
            break;
        }
        stuck_after(
            start,
            CONVERGE_BOUND,
            "collecting the deleted owners' chains",
            left.join(", "),
        )?;
        tokio::time::sleep(PAUSE).await;
    }
    notes.push(format!(
        "{} objects of deleted owners' chains collected after the faults in {:?}",
        doomed.len(),
        now().saturating_sub(start)
    ));

    let mut violations = Vec::new();
    for (name, uid) in &kept {
        let found = loop {
            match run.uid(name).await {
                Ok(found) => break found,
                Err(e) => stuck_after(start, CONVERGE_BOUND * 2, &format!("reading {name}"), e)?,
            }
        };
        if found.as_deref() != Some(uid.as_str()) {
            violations.push(Violation {
                guarantee: "garbage collection deletes only dependents of absent owners",
                detail: format!("{name} (uid {uid}) was deleted; now {found:?}"),
            });
        }
    }
    if !violations.is_empty() {
        return Err(ScenarioError::Violations(violations));
    }
    notes.push(format!("{} other objects kept", kept.len()));
    Ok(Report {
        scenario: GARBAGE_COLLECTION,
        seed,
        notes,
        elapsed: now(),
        history_hash: client.take_history().fingerprint(),
        relists: 0,
    })
}
