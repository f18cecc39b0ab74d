//! Watch delivery latency: for each `--watchers` level, that many concurrent watches on one
//! follower, each over its own connection, while `--watch-writes` writes go through the leader
//! at `--watch-rate` per second; Apiary (HTTPS watches, creates) and etcd (native gRPC watches,
//! each on a client of its own, puts) side by side. A sample is the time from sending a write to
//! one watcher reading its event, so it includes the write's commit and the follower's apply as
//! well as the fan-out.
//!
//! To decompose it, each level also reports when each write was acknowledged to the writer and
//! when the first and the last watcher read each event, and prints the CPU time every process
//! spent per delivery (one event read by one watcher) while the writes went on.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use apiary_raft::network::Connector;
use apiary_tests::DevCluster;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::etcd_cluster::EtcdCluster;
use apiary_tests::etcd_native;
use apiary_tests::kubeconfig::Credentials;
use apiary_tests::kubeconfig::Endpoint;
use apiary_tests::load::LevelResult;
use apiary_tests::objects;
use etcd_client::EventType;
use http::StatusCode;
use http_body_util::BodyExt;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tower::Service;

use super::Args;
use super::report::Row;
use super::report::System;

/// Name prefix of the objects the watchers wait for (followed by the level's watcher count).
const PREFIX: &str = "watch-";
/// How long the watchers get to connect, and to receive the last event after the last write.
const GRACE: Duration = Duration::from_secs(60);
/// Bytes read from a raw watch connection at a time.
const READ_BUFFER: usize = 64 * 1024;
/// Kernel clock ticks per second in `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// How the Apiary watchers read their streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Reader {
    /// One task per connection reading the TLS stream and scanning it for events (the cheapest
    /// client, so that the cluster's figures are not the bench's).
    Raw,
    /// The benchmark's HTTP client (hyper): a connection task and a body channel per watch.
    Hyper,
}

/// One watcher's deliveries: (write index, when it was read), or why it failed.
type Deliveries = Result<Vec<(usize, Instant)>, String>;

/// When each write was sent and acknowledged (`None`: not sent, or failed).
struct Writes {
    sent: Vec<Option<Instant>>,
    acked: Vec<Option<Instant>>,
    first_error: Option<String>,
}

/// Runs every `--watchers` level against the Apiary cluster, watching on `follower`.
pub async fn apiary(
    args: &Args,
    cluster: &DevCluster,
    leader: usize,
    follower: usize,
) -> Result<Vec<Row>, HarnessError> {
    let mut rows = Vec::new();
    for &watchers in &args.watchers {
        rows.extend(apiary_level(args, cluster, leader, follower, watchers).await?);
    }
    Ok(rows)
}

async fn apiary_level(
    args: &Args,
    cluster: &DevCluster,
    leader: usize,
    follower: usize,
    watchers: usize,
) -> Result<Vec<Row>, HarnessError> {
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
    let tag = format!("{PREFIX}{watchers}-");
    let writes = args.watch_writes as usize;
    let endpoint = cluster.endpoint(follower).await?;
    let connected = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..watchers)
        .map(|_| {
            let (path, tag, connected) = (path.clone(), tag.clone(), connected.clone());
            match args.watch_reader {
                Reader::Raw => {
                    tokio::spawn(raw_watch(endpoint.clone(), path, tag, writes, connected))
                }
                Reader::Hyper => {
                    tokio::spawn(hyper_watch(client.clone(), path, tag, writes, connected))
                }
            }
        })
        .collect();
    wait_connected("apiary", &connected, watchers, &format!("node-{follower}")).await;
    let mut processes = vec![
        (format!("node-{follower} (watched)"), cluster.pid(follower)?),
        (format!("node-{leader} (leader)"), cluster.pid(leader)?),
    ];
    for other in (1..=cluster.nodes()).filter(|i| *i != leader && *i != follower) {
        processes.push((format!("node-{other}"), cluster.pid(other)?));
    }
    processes.push(("bench".to_owned(), std::process::id()));
    let before = cpu_ticks(&processes);
    let writer = cluster.client(leader)?.clone();
    let value = objects::payload(args.value_size);
    let written = write_at_rate(args, |i| {
        let client = writer.clone();
        let body = objects::configmap(&format!("{tag}{i}"), &[("v", &value)]);
        async move {
            let reply = client.post(&objects::configmaps_path(), &body).await;
            reply
                .and_then(|r| r.expect(StatusCode::CREATED, "watched create"))
                .map(drop)
                .map_err(|e| e.to_string())
        }
    })
    .await;
    let received = join(handles).await;
    print_cpu("apiary", watchers, &written, &processes, &before);
    Ok(rows(System::Apiary, args, watchers, &written, received))
}

/// Runs every `--watchers` level against etcd, watching on member `follower` (0-based).
pub async fn etcd(
    args: &Args,
    cluster: &EtcdCluster,
    leader: usize,
    follower: usize,
) -> Result<Vec<Row>, HarnessError> {
    let mut rows = Vec::new();
    for &watchers in &args.watchers {
        rows.extend(etcd_level(args, cluster, leader, follower, watchers).await?);
    }
    Ok(rows)
}

async fn etcd_level(
    args: &Args,
    cluster: &EtcdCluster,
    leader: usize,
    follower: usize,
    watchers: usize,
) -> Result<Vec<Row>, HarnessError> {
    let prefix = format!("/bench-watch/{watchers}/");
    let writes = args.watch_writes as usize;
    let connected = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::with_capacity(watchers);
    for _ in 0..watchers {
        let client = etcd_native::connect_member(cluster, follower, GRACE).await?;
        handles.push(tokio::spawn(etcd_watch(
            client,
            prefix.clone(),
            writes,
            connected.clone(),
        )));
    }
    wait_connected("etcd", &connected, watchers, &format!("m{}", follower + 1)).await;
    let pids = cluster.pids();
    let mut processes: Vec<(String, u32)> = Vec::new();
    for (member, role) in [(follower, " (watched)"), (leader, " (leader)")] {
        processes.push((format!("m{}{role}", member + 1), pids[member]));
    }
    for (member, pid) in pids.iter().enumerate() {
        if member != leader && member != follower {
            processes.push((format!("m{}", member + 1), *pid));
        }
    }
    processes.push(("bench".to_owned(), std::process::id()));
    let before = cpu_ticks(&processes);
    let writer = etcd_native::connect_member(cluster, leader, GRACE).await?;
    let kv = etcd_native::kv(&writer);
    let value = vec![b'x'; args.value_size];
    let written = write_at_rate(args, |i| {
        etcd_native::put(kv.clone(), format!("{prefix}{i}"), value.clone())
    })
    .await;
    let received = join(handles).await;
    print_cpu("etcd", watchers, &written, &processes, &before);
    Ok(rows(System::Etcd, args, watchers, &written, received))
}

/// Waits (up to [`GRACE`]) until `watchers` watches are established.
async fn wait_connected(system: &str, connected: &AtomicUsize, watchers: usize, on: &str) {
    let deadline = Instant::now() + GRACE;
    while connected.load(Ordering::SeqCst) < watchers && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "{system}: {} of {watchers} watchers connected on {on}",
        connected.load(Ordering::SeqCst)
    );
}

/// Sends the writes `write(0..--watch-writes)` at `--watch-rate` per second, each from its own
/// task; when each was sent and acknowledged.
async fn write_at_rate<F, Fut>(args: &Args, write: F) -> Writes
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let mut ticker =
        tokio::time::interval(Duration::from_secs_f64(1.0 / args.watch_rate.max(1) as f64));
    let mut pending = Vec::new();
    for i in 0..args.watch_writes as usize {
        ticker.tick().await;
        let request = write(i);
        pending.push(tokio::spawn(async move {
            let sent = Instant::now();
            let result = request.await;
            (sent, result.map(|()| Instant::now()))
        }));
    }
    let mut written = Writes {
        sent: Vec::new(),
        acked: Vec::new(),
        first_error: None,
    };
    for p in pending {
        match p.await {
            Ok((sent, acked)) => {
                written.sent.push(Some(sent));
                written.acked.push(acked.as_ref().ok().copied());
                if let Err(e) = acked {
                    written.first_error.get_or_insert(e);
                }
            }
            Err(e) => {
                written.sent.push(None);
                written.acked.push(None);
                written.first_error.get_or_insert(e.to_string());
            }
        }
    }
    written
}

async fn join(handles: Vec<tokio::task::JoinHandle<Deliveries>>) -> Vec<Deliveries> {
    let mut received = Vec::with_capacity(handles.len());
    for handle in handles {
        received.push(handle.await.unwrap_or_else(|e| Err(e.to_string())));
    }
    received
}

/// A latency row of `samples` (sorted here) with `errors` missing ones.
fn level(
    watchers: usize,
    mut samples: Vec<Duration>,
    errors: u64,
    first_error: Option<String>,
) -> LevelResult {
    samples.sort_unstable();
    LevelResult {
        concurrency: watchers,
        ok: samples.len() as u64,
        errors,
        first_error,
        elapsed: Duration::ZERO,
        latencies: samples,
        truncated: false,
    }
}

/// The level's rows: every delivery, then its decomposition (the write's acknowledgement, the
/// first and the last watcher of each event).
fn rows(
    system: System,
    args: &Args,
    watchers: usize,
    written: &Writes,
    received: Vec<Deliveries>,
) -> Vec<Row> {
    let writes = written.sent.len();
    let mut all = Vec::new();
    let mut missing = 0u64;
    let mut first_error = written.first_error.clone();
    let mut first: Vec<Option<Instant>> = vec![None; writes];
    let mut last: Vec<Option<Instant>> = vec![None; writes];
    for deliveries in received {
        match deliveries {
            Ok(deliveries) => {
                missing += writes.saturating_sub(deliveries.len()) as u64;
                for (i, at) in deliveries {
                    let Some(Some(sent)) = written.sent.get(i) else {
                        continue;
                    };
                    all.push(at.saturating_duration_since(*sent));
                    first[i] = Some(first[i].map_or(at, |f| f.min(at)));
                    last[i] = Some(last[i].map_or(at, |l| l.max(at)));
                }
            }
            Err(e) => {
                missing += writes as u64;
                first_error.get_or_insert(e);
            }
        }
    }
    let since_sent = |at: &[Option<Instant>]| -> Vec<Duration> {
        (written.sent.iter().zip(at))
            .filter_map(|(s, a)| Some(a.as_ref()?.saturating_duration_since((*s)?)))
            .collect()
    };
    let acked = since_sent(&written.acked);
    let unacked = (writes - acked.len()) as u64;
    let (first, last) = (since_sent(&first), since_sent(&last));
    let unread = (writes - last.len()) as u64;
    let name = format!(
        "watch delivery, {watchers} watchers on a follower, {} writes at {}/s",
        args.watch_writes, args.watch_rate
    );
    vec![
        Row::latency(
            system,
            name.clone(),
            &level(watchers, all, missing, first_error),
        ),
        Row::latency(
            system,
            format!("{name}: write acknowledged"),
            &level(watchers, acked, unacked, None),
        ),
        Row::latency(
            system,
            format!("{name}: first watcher of each event"),
            &level(watchers, first, unread, None),
        ),
        Row::latency(
            system,
            format!("{name}: last watcher of each event"),
            &level(watchers, last, unread, None),
        ),
    ]
}

/// `utime + stime` of each process, in clock ticks (0 for one that is gone).
fn cpu_ticks(processes: &[(String, u32)]) -> Vec<u64> {
    (processes.iter())
        .map(|(_, pid)| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The fields after the parenthesised command name: state is the first, utime the
            // 12th and stime the 13th.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            let field = |n: usize| fields.get(n).and_then(|f| f.parse::<u64>().ok());
            field(11).unwrap_or(0) + field(12).unwrap_or(0)
        })
        .collect()
}

/// Prints the CPU time each process spent since `before`, per delivery (one event read by one
/// watcher) and in all.
fn print_cpu(
    system: &str,
    watchers: usize,
    written: &Writes,
    processes: &[(String, u32)],
    before: &[u64],
) {
    let after = cpu_ticks(processes);
    let deliveries = (written.acked.iter().flatten().count() * watchers).max(1) as f64;
    let figures: Vec<String> = (processes.iter().zip(before.iter().zip(after)))
        .map(|((name, _), (b, a))| {
            let seconds = a.saturating_sub(*b) as f64 / TICKS_PER_SECOND;
            format!(
                "{name} {:.1} us ({seconds:.2} s)",
                seconds * 1e6 / deliveries
            )
        })
        .collect();
    println!(
        "{system}, {watchers} watchers: CPU per delivery: {}",
        figures.join(", ")
    );
}

/// Finds the events of the watched writes in a stream of newline-ended JSON events, whatever
/// frames it arrives in (HTTP chunk-size lines between events are not events).
struct EventScanner {
    /// `"name":"<tag>`: what precedes a watched object's index.
    needle: Vec<u8>,
    /// The bytes after the last newline.
    partial: Vec<u8>,
    received: Vec<(usize, Instant)>,
}

impl EventScanner {
    fn new(tag: &str, writes: usize) -> Self {
        Self {
            needle: format!("\"name\":\"{tag}").into_bytes(),
            partial: Vec::new(),
            received: Vec::with_capacity(writes),
        }
    }

    /// Takes `data`, read at `now`.
    fn feed(&mut self, data: &[u8], now: Instant) {
        let Some(end) = data.iter().rposition(|b| *b == b'\n') else {
            self.partial.extend_from_slice(data);
            return;
        };
        let mut lines = std::mem::take(&mut self.partial);
        lines.extend_from_slice(&data[..end]);
        for line in lines.split(|b| *b == b'\n') {
            if let Some(i) = self.watched_index(line) {
                self.received.push((i, now));
            }
        }
        self.partial.extend_from_slice(&data[end + 1..]);
    }

    /// The index `i` of an ADDED event for object `<tag><i>`, read without parsing the JSON
    /// (the watchers share the benchmark's CPU with the cluster).
    fn watched_index(&self, line: &[u8]) -> Option<usize> {
        if !line.starts_with(b"{\"type\":\"ADDED\"") {
            return None;
        }
        let at = line
            .windows(self.needle.len())
            .position(|w| w == self.needle.as_slice())?
            + self.needle.len();
        let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        std::str::from_utf8(&line[at..at + digits])
            .ok()?
            .parse()
            .ok()
    }
}

/// One watcher on a TLS connection of its own, written and read directly: sends the watch
/// request, then reads the stream until it has seen `writes` watched events or the grace
/// period after the last expected write ran out.
async fn raw_watch(
    endpoint: Endpoint,
    path: String,
    tag: String,
    writes: usize,
    connected: Arc<AtomicUsize>,
) -> Deliveries {
    let mut tls = (*endpoint.tls).clone();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let mut stream = Connector::new(Some(Arc::new(tls)))
        .call(endpoint.server.clone())
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    let host = endpoint.server.authority().map_or("", |a| a.as_str());
    let bearer = match &endpoint.credentials {
        Credentials::Token(token) => format!("Authorization: Bearer {token}\r\n"),
        _ => String::new(),
    };
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\n{bearer}\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    stream.flush().await.map_err(|e| e.to_string())?;
    let deadline = tokio::time::Instant::now() + GRACE + Duration::from_secs(writes as u64);
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut head = Vec::new();
    let mut scanner = EventScanner::new(&tag, writes);
    loop {
        let n = match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Err(_) => return Err("the watch ended before its answer".to_owned()),
            Ok(Ok(n)) => n,
            Ok(Err(e)) => return Err(e.to_string()),
        };
        head.extend_from_slice(&buffer[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            if !head.starts_with(b"HTTP/1.1 200") {
                let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
                return Err(format!("watch answered {}", String::from_utf8_lossy(line)));
            }
            scanner.feed(&head[end + 4..], Instant::now());
            break;
        }
        if head.len() > READ_BUFFER {
            return Err("the watch answer's head is too long".to_owned());
        }
    }
    connected.fetch_add(1, Ordering::SeqCst);
    while scanner.received.len() < writes {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Err(_) => break,
            Ok(Ok(n)) => scanner.feed(&buffer[..n], Instant::now()),
            Ok(Err(e)) => return Err(e.to_string()),
        }
    }
    Ok(scanner.received)
}

/// One watcher through the benchmark's HTTP client (on its own connection of `client`'s pool).
async fn hyper_watch(
    client: HttpClient,
    path: String,
    tag: String,
    writes: usize,
    connected: Arc<AtomicUsize>,
) -> Deliveries {
    let (status, mut body) = client
        .get_streaming(&path)
        .await
        .map_err(|e| e.to_string())?;
    if status != StatusCode::OK {
        return Err(format!("watch answered {status}"));
    }
    connected.fetch_add(1, Ordering::SeqCst);
    let mut scanner = EventScanner::new(&tag, writes);
    let deadline = tokio::time::Instant::now() + GRACE + Duration::from_secs(writes as u64);
    while scanner.received.len() < writes {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Ok(None) | Err(_) => break,
        };
        if let Ok(data) = frame.into_data() {
            scanner.feed(&data, Instant::now());
        }
    }
    Ok(scanner.received)
}

/// One native etcd watcher on `client` (a connection of its own): the puts under `prefix`
/// that created a key `<prefix><i>`.
async fn etcd_watch(
    client: etcd_client::Client,
    prefix: String,
    writes: usize,
    connected: Arc<AtomicUsize>,
) -> Deliveries {
    let mut stream = etcd_native::watch_prefix(&client, &prefix).await?;
    connected.fetch_add(1, Ordering::SeqCst);
    let mut received = Vec::with_capacity(writes);
    let deadline = tokio::time::Instant::now() + GRACE + Duration::from_secs(writes as u64);
    while received.len() < writes {
        let reply = match tokio::time::timeout_at(deadline, stream.message()).await {
            Ok(Ok(Some(reply))) => reply,
            Ok(Ok(None)) | Err(_) => break,
            Ok(Err(e)) => return Err(e.to_string()),
        };
        let now = Instant::now();
        for event in reply.events() {
            let Some(kv) = event.kv() else {
                continue;
            };
            let index = (kv.key().strip_prefix(prefix.as_bytes()))
                .and_then(|i| std::str::from_utf8(i).ok()?.parse().ok());
            if let (EventType::Put, 1, Some(i)) = (event.event_type(), kv.version(), index) {
                received.push((i, now));
            }
        }
    }
    drop(client);
    Ok(received)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scanner_finds_events_across_frames_and_chunk_lines() {
        let mut scanner = EventScanner::new("watch-5-", 3);
        let now = Instant::now();
        let stream =
            b"4f\r\n{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"watch-5-12\"}}}\n\r\n\
            {\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"watch-5-13\"}}}\n\
            {\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"watch-50-1\"}}}\n\
            {\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"watch-5-7\"}}}\n";
        for piece in stream.chunks(7) {
            scanner.feed(piece, now);
        }
        let found: Vec<usize> = scanner.received.iter().map(|(i, _)| *i).collect();
        assert_eq!(found, vec![12, 7]);
    }
}
