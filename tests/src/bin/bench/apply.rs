//! `--apply`: write throughput on a Deployment-sized object (about 1.5 KiB of JSON: two containers
//! with ports, env, resources and probes, volumes, tolerations) written three ways, interleaved
//! in one run: PUT of the whole object, a JSON merge patch of one annotation, and a server-side
//! apply of the whole manifest (`application/apply-patch+yaml` with a JSON body, as kubectl and
//! client-go send it). Every request changes the annotation `bench.example.com/seq`, so each is
//! a real write. Each way has its own Deployments (one per client of the highest level) and its
//! own field manager; the requests go round-robin to the three replicas. For every level the
//! three ways run one after the other, in an order that rotates from round to round.

use std::fmt::Write as _;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::load;
use apiary_tests::load::LevelResult;
use bytes::Bytes;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::Args;
use super::max_level;
use super::ms;
use super::report;
use super::rounds::p50;
use super::rounds::rate;

/// The collection of the written Deployments.
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// The annotation every write changes.
const SEQ: &str = "bench.example.com/seq";

/// One way of writing a Deployment.
#[derive(Clone, Copy)]
enum Way {
    /// PUT of the whole object, without a resourceVersion.
    Put,
    /// A JSON merge patch of the annotation.
    MergePatch,
    /// A server-side apply of the whole manifest.
    Apply,
}

const WAYS: [Way; 3] = [Way::Put, Way::MergePatch, Way::Apply];

impl Way {
    fn name(self) -> &'static str {
        match self {
            Self::Put => "PUT",
            Self::MergePatch => "merge patch",
            Self::Apply => "apply",
        }
    }

    /// The prefix of this way's Deployments, also its field manager.
    fn prefix(self) -> &'static str {
        match self {
            Self::Put => "bench-put",
            Self::MergePatch => "bench-merge",
            Self::Apply => "bench-apply",
        }
    }

    /// The request writing Deployment `name` with `seq` in the annotation.
    fn request(self, name: &str, seq: u64) -> (Method, String, &'static str, Bytes) {
        let manager = self.prefix();
        let path = format!("{DEPLOYMENTS}/{name}?fieldManager={manager}");
        let (method, content_type, body) = match self {
            Self::Put => (Method::PUT, "application/json", deployment(name, seq)),
            Self::MergePatch => (
                Method::PATCH,
                "application/merge-patch+json",
                json!({"metadata": {"annotations": {SEQ: seq.to_string()}}}),
            ),
            Self::Apply => (
                Method::PATCH,
                "application/apply-patch+yaml",
                deployment(name, seq),
            ),
        };
        (method, path, content_type, Bytes::from(body.to_string()))
    }
}

/// The Deployment `name` with `seq` in its annotation.
fn deployment(name: &str, seq: u64) -> Value {
    let container = |n: &str, image: &str, port: u16| {
        json!({
            "name": n,
            "image": image,
            "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
            "env": [
                {"name": "MODE", "value": "production"},
                {"name": "LOG_LEVEL", "value": "info"}
            ],
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"cpu": "500m", "memory": "256Mi"}
            },
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 10},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}]
        })
    };
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": "bench", "tier": "web"},
            "annotations": {SEQ: seq.to_string(), "bench.example.com/owner": "apply"}
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "bench"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "bench", "tier": "web"}},
                "spec": {
                    "containers": [
                        container("web", "registry.example.com/web:1.27.3", 8080),
                        container("sidecar", "registry.example.com/proxy:2.4.0", 15000)
                    ],
                    "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
                    "serviceAccountName": "default",
                    "tolerations": [
                        {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
                    ]
                }
            }
        }
    })
}

/// A write answered 200 (or 201 for the creating apply).
async fn write(client: HttpClient, way: Way, name: String, seq: u64) -> Result<(), String> {
    let (method, path, content_type, body) = way.request(&name, seq);
    match client.send_typed(method, &path, content_type, body).await {
        Ok(r) if r.status == StatusCode::OK || r.status == StatusCode::CREATED => Ok(()),
        Ok(r) => Err(format!("{}: {}", r.status, r.text())),
        Err(e) => Err(e.to_string()),
    }
}

/// Creates `objects` Deployments per way: a POST for PUT and merge patch, the first apply for
/// apply (so its objects have the one Apply manager).
async fn create(replicas: &[HttpClient], objects: u64) -> Result<(), HarnessError> {
    for way in WAYS {
        for k in 0..objects {
            let name = format!("{}-{k}", way.prefix());
            let client = replicas[k as usize % replicas.len()].clone();
            let created = match way {
                Way::Apply => write(client, way, name, 0).await,
                Way::Put | Way::MergePatch => {
                    match client.post(DEPLOYMENTS, &deployment(&name, 0)).await {
                        Ok(r) if r.status == StatusCode::CREATED => Ok(()),
                        Ok(r) => Err(format!("{}: {}", r.status, r.text())),
                        Err(e) => Err(e.to_string()),
                    }
                }
            };
            created.map_err(|body| HarnessError::UnexpectedStatus {
                what: format!("creating {}", way.prefix()),
                status: StatusCode::INTERNAL_SERVER_ERROR,
                body,
            })?;
        }
    }
    Ok(())
}

/// One level of one way: `args.requests` writes from `level` clients.
async fn level(args: &Args, replicas: &[HttpClient], way: Way, level: usize) -> LevelResult {
    let replicas = replicas.to_vec();
    let objects = max_level(args) as u64;
    let budget = Duration::from_secs(args.level_budget);
    load::run(level, args.requests, budget, move |i| {
        let client = replicas[(i as usize) % replicas.len()].clone();
        let name = format!("{}-{}", way.prefix(), i % objects);
        write(client, way, name, i + 1)
    })
    .await
}

/// Runs the comparison and answers its table.
pub async fn run(args: &Args) -> Result<String, HarnessError> {
    let cluster = DevCluster::start(DevOptions::default()).await?;
    let replicas: Vec<HttpClient> = (1..=cluster.nodes())
        .map(|i| cluster.client(i).cloned())
        .collect::<Result<_, _>>()?;
    let leader = cluster.wait_leader(Duration::from_secs(5)).await;
    println!(
        "apiary: 3 replicas in {}, leader {}",
        cluster.dir().display(),
        leader.map_or("unknown".to_owned(), |l| format!("node-{l}")),
    );
    println!(
        "one Deployment: {} bytes of JSON",
        deployment("bench-apply-0", 0).to_string().len()
    );
    create(&replicas, max_level(args) as u64).await?;
    // Unmeasured: every way once at the highest level, to open the connections.
    for way in WAYS {
        let warm = level(args, &replicas, way, max_level(args)).await;
        report(&format!("warm-up {}", way.name()), &warm);
    }
    // results[level][way]: one LevelResult per round.
    let mut results: Vec<Vec<Vec<LevelResult>>> =
        vec![vec![Vec::new(); WAYS.len()]; args.levels.len()];
    for round in 0..args.rounds {
        for (l, &clients) in args.levels.iter().enumerate() {
            for k in 0..WAYS.len() {
                let w = (round + k) % WAYS.len();
                let result = level(args, &replicas, WAYS[w], clients).await;
                report(&format!("round {round} {}", WAYS[w].name()), &result);
                results[l][w].push(result);
            }
        }
    }
    Ok(table(args, &results))
}

/// The markdown table: per level, each way's mean ops/s (range) and p50, and apply's ratio to
/// PUT and to merge patch.
fn table(args: &Args, results: &[Vec<Vec<LevelResult>>]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| clients | PUT ops/s | merge patch ops/s | apply ops/s | PUT p50 | merge patch p50 | apply p50 | apply/PUT | apply/merge patch | errors |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (l, clients) in args.levels.iter().enumerate() {
        let rates: Vec<(f64, f64, f64)> = results[l].iter().map(|runs| rate(runs)).collect();
        let cell = |(mean, low, high): (f64, f64, f64)| format!("{mean:.0} ({low:.0}–{high:.0})");
        let ratio = |theirs: f64| {
            if theirs > 0.0 {
                format!("{:.2}", rates[2].0 / theirs)
            } else {
                "-".to_owned()
            }
        };
        let errors: u64 = results[l].iter().flatten().map(|r| r.errors).sum();
        let _ = writeln!(
            out,
            "| {clients} | {} | {} | {} | {} | {} | {} | {} | {} | {errors} |",
            cell(rates[0]),
            cell(rates[1]),
            cell(rates[2]),
            ms(p50(&results[l][0])),
            ms(p50(&results[l][1])),
            ms(p50(&results[l][2])),
            ratio(rates[0].0),
            ratio(rates[1].0),
        );
    }
    out
}
