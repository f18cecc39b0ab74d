//! Watch delivery latency: `--watchers` concurrent watches on one follower, each over its own
//! HTTPS connection, while `--watch-writes` creates go through the leader at `--watch-rate` per
//! second. A sample is the time from sending a create to one watcher reading its ADDED event,
//! so it includes the write's commit and the follower's apply as well as the fan-out.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::DevCluster;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::load::LevelResult;
use apiary_tests::objects;
use http::StatusCode;
use http_body_util::BodyExt;

use super::Args;
use super::report::Row;
use super::report::System;

/// Name prefix of the objects the watchers wait for.
const PREFIX: &str = "watch-";
/// How long the watchers get to connect, and to receive the last event after the last write.
const GRACE: Duration = Duration::from_secs(60);

/// Runs the watchers and the writer; one row of latency percentiles over every delivery.
pub async fn apiary_latency(
    args: &Args,
    cluster: &DevCluster,
    leader: usize,
    follower: usize,
) -> Result<Row, HarnessError> {
    let client = cluster.client(follower)?.clone();
    let start = client
        .get(&format!("{}?limit=1", objects::configmaps_path()))
        .await?
        .expect(StatusCode::OK, "list for the start version")?
        .json("list")?["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_owned();
    let path = format!(
        "{}?watch=1&resourceVersion={start}",
        objects::configmaps_path()
    );
    let connected = Arc::new(AtomicUsize::new(0));
    let writes = args.watch_writes as usize;
    let watchers: Vec<_> = (0..args.watchers)
        .map(|_| {
            tokio::spawn(watch(
                client.clone(),
                path.clone(),
                writes,
                connected.clone(),
            ))
        })
        .collect();
    let deadline = Instant::now() + GRACE;
    while connected.load(Ordering::SeqCst) < args.watchers && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "apiary: {} of {} watchers connected on node-{follower}",
        connected.load(Ordering::SeqCst),
        args.watchers
    );
    let sent = write(args, cluster, leader).await?;
    let mut latencies = Vec::new();
    let mut missing = 0u64;
    let mut first_error = None;
    for watcher in watchers {
        match watcher.await {
            Ok(Ok(received)) => {
                missing += (writes - received.len()) as u64;
                latencies.extend(
                    received.into_iter().filter_map(|(i, at)| {
                        sent.get(&i).map(|s| at.saturating_duration_since(*s))
                    }),
                );
            }
            Ok(Err(e)) => {
                missing += writes as u64;
                first_error.get_or_insert(e);
            }
            Err(e) => {
                missing += writes as u64;
                first_error.get_or_insert(e.to_string());
            }
        }
    }
    latencies.sort_unstable();
    let level = LevelResult {
        concurrency: args.watchers,
        ok: latencies.len() as u64,
        errors: missing,
        first_error,
        elapsed: Duration::ZERO,
        latencies,
        truncated: false,
    };
    Ok(Row::latency(
        System::Apiary,
        format!(
            "watch delivery, {} watchers on a follower, {} creates at {}/s",
            args.watchers, args.watch_writes, args.watch_rate
        ),
        &level,
    ))
}

/// Creates the watched objects through the leader at the configured rate; when each was sent.
async fn write(
    args: &Args,
    cluster: &DevCluster,
    leader: usize,
) -> Result<HashMap<usize, Instant>, HarnessError> {
    let client = cluster.client(leader)?.clone();
    let value = objects::payload(args.value_size);
    let sent = Arc::new(Mutex::new(HashMap::new()));
    let mut ticker =
        tokio::time::interval(Duration::from_secs_f64(1.0 / args.watch_rate.max(1) as f64));
    let mut pending = Vec::new();
    for i in 0..args.watch_writes as usize {
        ticker.tick().await;
        let client = client.clone();
        let body = objects::configmap(&format!("{PREFIX}{i}"), &[("v", &value)]);
        let sent = sent.clone();
        pending.push(tokio::spawn(async move {
            if let Ok(mut s) = sent.lock() {
                s.insert(i, Instant::now());
            }
            client.post(&objects::configmaps_path(), &body).await
        }));
    }
    for p in pending {
        if let Ok(reply) = p.await {
            reply?.expect(StatusCode::CREATED, "watched create")?;
        }
    }
    let sent = sent.lock().map(|s| s.clone()).unwrap_or_default();
    Ok(sent)
}

/// One watcher (on its own connection of `client`'s pool): reads events until it has seen `writes` of the watched objects or the grace
/// period after the last expected write ran out; (object index, when it arrived) per event.
async fn watch(
    client: HttpClient,
    path: String,
    writes: usize,
    connected: Arc<AtomicUsize>,
) -> Result<Vec<(usize, Instant)>, String> {
    let (status, mut body) = client
        .get_streaming(&path)
        .await
        .map_err(|e| e.to_string())?;
    if status != StatusCode::OK {
        return Err(format!("watch answered {status}"));
    }
    connected.fetch_add(1, Ordering::SeqCst);
    let mut buffer = Vec::new();
    let mut received = Vec::with_capacity(writes);
    let deadline = tokio::time::Instant::now() + GRACE + Duration::from_secs(writes as u64);
    while received.len() < writes {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Ok(None) | Err(_) => break,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let now = Instant::now();
        buffer.extend_from_slice(&data);
        while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=end).collect();
            if let Some(i) = watched_index(&line) {
                received.push((i, now));
            }
        }
    }
    Ok(received)
}

/// The index `i` of an ADDED event for object `watch-<i>`, read without parsing the JSON
/// (the watchers share the benchmark's CPU with the cluster).
fn watched_index(line: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(line).ok()?;
    if !text.starts_with("{\"type\":\"ADDED\"") {
        return None;
    }
    let needle = format!("\"name\":\"{PREFIX}");
    let at = text.find(&needle)? + needle.len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}
