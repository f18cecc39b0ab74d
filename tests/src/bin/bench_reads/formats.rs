//! `--formats`: LIST of many pods in every wire format side by side. One replica (the leader)
//! holds `--objects` pods; each round lists the whole collection once per format (JSON, YAML,
//! Protobuf, Table, JSON and Protobuf with gzip; CBOR too with `--formats-cbor`), the order
//! rotating from round to round so that no format always goes first. The first LIST of each
//! format is reported apart (it encodes every object; later ones may reuse cached encodings).
//! Throughput is as a client sees it: objects and response bytes over the p50 latency.

use std::time::Duration;
use std::time::Instant;

use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::load;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::Args;
use super::BUDGET;
use super::FILL_CONCURRENCY;

/// The listed collection.
const PODS: &str = "/api/v1/namespaces/default/pods";

/// One way of asking for the list.
struct Variant {
    /// The row's name.
    name: &'static str,
    /// The `Accept` header sent.
    accept: &'static str,
    /// Whether `Accept-Encoding: gzip` is sent too.
    gzip: bool,
    /// The `Content-Type` the answer must start with (a server falling back to JSON fails).
    answer: &'static str,
    /// What else the body must show.
    check: Check,
}

/// What a body must show besides its `Content-Type`.
#[derive(Clone, Copy)]
enum Check {
    /// Nothing more (a gzip body is not opened).
    Nothing,
    /// It starts with these bytes (the Protobuf envelope's prefix).
    Prefix(&'static [u8]),
    /// It is JSON of this `kind` (a Table is `application/json` too).
    Kind(&'static str),
}

/// The formats compared; CBOR only when asked for (its gate is alpha, off by default).
fn variants(cbor: bool) -> Vec<Variant> {
    const PROTOBUF: &str = "application/vnd.platform.protobuf";
    const TABLE: &str = "application/json;as=Table;g=meta.platform.io;v=v1";
    const ENVELOPE: &[u8] = &[0x6b, 0x38, 0x73, 0x00];
    let variant = |name, accept, gzip, answer, check| Variant {
        name,
        accept,
        gzip,
        answer,
        check,
    };
    let json = "application/json";
    let mut all = vec![
        variant("JSON", json, false, json, Check::Kind("PodList")),
        variant("JSON + gzip", json, true, json, Check::Nothing),
        variant(
            "Protobuf",
            PROTOBUF,
            false,
            PROTOBUF,
            Check::Prefix(ENVELOPE),
        ),
        variant("Protobuf + gzip", PROTOBUF, true, PROTOBUF, Check::Nothing),
        variant(
            "YAML",
            "application/yaml",
            false,
            "application/yaml",
            Check::Nothing,
        ),
        variant("Table", TABLE, false, json, Check::Kind("Table")),
    ];
    if cbor {
        let cbor = "application/cbor";
        all.push(variant("CBOR", cbor, false, cbor, Check::Nothing));
    }
    all
}

/// A pod of about 1.5 KiB in JSON: labels, annotations, two containers with ports, env and
/// resources, the fields a scheduler and a kubelet fill in, and a status.
fn pod(name: &str) -> Value {
    let container = |n: &str, image: &str, port: u16| {
        json!({
            "name": n,
            "image": image,
            "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
            "env": [{"name": "MODE", "value": "production"}, {"name": "REPLICA", "value": name}],
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "500m", "memory": "256Mi"}
            },
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 10}
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "bench", "tier": "web", "pod-template-hash": "6d4cf56db6"},
            "annotations": {"bench.example.com/owner": "formats", "bench.example.com/rev": "42"}
        },
        "spec": {
            "containers": [
                container("web", "registry.example.com/web:1.27.3", 8080),
                container("sidecar", "registry.example.com/proxy:2.4.0", 15000)
            ],
            "nodeName": "worker-7",
            "serviceAccountName": "default",
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}]
        },
        "status": {
            "phase": "Pending",
            "podIP": "10.244.7.12",
            "hostIP": "10.0.0.7",
            "startTime": "2026-01-01T00:00:00Z"
        }
    })
}

/// Creates pods `pod-<from>` .. `pod-<to - 1>`, spread over the replicas.
async fn fill(replicas: &[HttpClient], count: u64) -> Result<(), HarnessError> {
    let replicas = replicas.to_vec();
    let result = load::run(FILL_CONCURRENCY, count, BUDGET, move |i| {
        let client = replicas[(i as usize) % replicas.len()].clone();
        let body = pod(&format!("pod-{i:05}"));
        async move {
            match client.post(PODS, &body).await {
                Ok(r) if r.status == StatusCode::CREATED => Ok(()),
                Ok(r) => Err(format!("{}: {}", r.status, r.text())),
                Err(e) => Err(e.to_string()),
            }
        }
    })
    .await;
    println!(
        "apiary: filled {count} pods in {:.1}s",
        result.elapsed.as_secs_f64()
    );
    match result.first_error {
        Some(body) => Err(HarnessError::UnexpectedStatus {
            what: "filling pods".to_owned(),
            status: StatusCode::INTERNAL_SERVER_ERROR,
            body,
        }),
        None => Ok(()),
    }
}

/// What one variant measured.
struct Measured {
    /// The first LIST (no cached encodings yet).
    first: Option<Duration>,
    /// Every later LIST.
    latencies: Vec<Duration>,
    /// Response bytes as sent (compressed when gzip).
    bytes: usize,
    errors: u64,
    first_error: Option<String>,
}

/// One LIST through `client` (which sends the variant's headers): its latency and body size.
async fn list_once(client: &HttpClient, variant: &Variant) -> Result<(Duration, usize), String> {
    let sent = Instant::now();
    let reply = client.get(PODS).await.map_err(|e| e.to_string())?;
    let elapsed = sent.elapsed();
    let header = |name: &str| {
        reply
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    if reply.status != StatusCode::OK {
        return Err(format!("{}: {}", reply.status, reply.text()));
    }
    if !header("content-type").starts_with(variant.answer) {
        return Err(format!("answered {:?}", header("content-type")));
    }
    if variant.gzip != (header("content-encoding") == "gzip") {
        return Err(format!("content-encoding {:?}", header("content-encoding")));
    }
    match variant.check {
        Check::Nothing => {}
        Check::Prefix(prefix) if reply.body.starts_with(prefix) => {}
        Check::Prefix(prefix) => return Err(format!("the body does not start with {prefix:?}")),
        Check::Kind(kind) => {
            let body: Value = serde_json::from_slice(&reply.body).map_err(|e| e.to_string())?;
            if body["kind"] != kind {
                return Err(format!("a {} instead of a {kind}", body["kind"]));
            }
        }
    }
    Ok((elapsed, reply.body.len()))
}

/// Runs the comparison and prints its table.
pub async fn run(
    args: &Args,
    replicas: &[HttpClient],
    leader: usize,
) -> Result<String, HarnessError> {
    fill(replicas, args.objects).await?;
    let variants = variants(args.formats_cbor);
    let mut clients = Vec::new();
    for v in &variants {
        let mut client = replicas[leader - 1]
            .clone()
            .with_header("accept", v.accept)?;
        if v.gzip {
            client = client.with_header("accept-encoding", "gzip")?;
        }
        clients.push(client);
    }
    let mut measured: Vec<Measured> = variants
        .iter()
        .map(|_| Measured {
            first: None,
            latencies: Vec::new(),
            bytes: 0,
            errors: 0,
            first_error: None,
        })
        .collect();
    for round in 0..=args.lists as usize {
        for k in 0..variants.len() {
            let i = (round + k) % variants.len();
            let m = &mut measured[i];
            match list_once(&clients[i], &variants[i]).await {
                Ok((latency, bytes)) if round == 0 => (m.first, m.bytes) = (Some(latency), bytes),
                Ok((latency, bytes)) => {
                    m.latencies.push(latency);
                    m.bytes = bytes;
                }
                Err(e) => {
                    m.errors += 1;
                    m.first_error.get_or_insert(e);
                }
            }
        }
    }
    Ok(table(args.objects, &variants, &mut measured))
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("-".to_owned(), |d| {
        format!("{:.1}ms", d.as_secs_f64() * 1000.0)
    })
}

/// The markdown table of the comparison, one line per variant.
fn table(objects: u64, variants: &[Variant], measured: &mut [Measured]) -> String {
    let mut out = format!(
        "\n| LIST {objects} pods as | response bytes | first LIST | p50 | p99 | pods/s at p50 | MiB/s at p50 | errors |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for (v, m) in variants.iter().zip(measured.iter_mut()) {
        m.latencies.sort();
        let p50 = load::percentile(&m.latencies, 50.0);
        let per_second = |amount: f64| p50.map(|p| amount / p.as_secs_f64());
        let pods = per_second(objects as f64).map_or("-".to_owned(), |r| format!("{r:.0}"));
        let mib = per_second(m.bytes as f64 / (1024.0 * 1024.0))
            .map_or("-".to_owned(), |r| format!("{r:.1}"));
        let errors = match &m.first_error {
            Some(e) => format!(
                "{} (first: {})",
                m.errors,
                e.chars().take(120).collect::<String>()
            ),
            None => "0".to_owned(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {errors} |\n",
            v.name,
            m.bytes,
            ms(m.first),
            ms(p50),
            ms(load::percentile(&m.latencies, 99.0)),
            pods,
            mib,
        ));
    }
    out
}
