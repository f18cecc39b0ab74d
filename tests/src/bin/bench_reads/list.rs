//! LIST figures: a whole collection in one response, and a paged traversal (`limit` +
//! `continue` for Apiary, `limit` + the next key for etcd), each on the leader and a follower;
//! etcd's through its native gRPC API and through its JSON gateway, over the same keys.
//!
//! Each side's client does what its ordinary clients do with the answer: Apiary's reads the
//! whole body and decodes it into typed `ConfigMap`s (kube-rs' `Api::list`, client-go's typed
//! clients), the native etcd client decodes the protobuf range into `KeyValue`s. Apiary's whole
//! list is measured a second time in Protobuf, decoded into k8s-pb's `ConfigMapList` as
//! client-go's Protobuf clients (controller manager, scheduler, kubelet) decode theirs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::Reply;
use apiary_tests::etcd_cluster;
use apiary_tests::etcd_native;
use apiary_tests::load;
use apiary_tests::objects;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use etcd_client::KvClient;
use http::Method;
use http::StatusCode;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_pb::api::core::v1::ConfigMapList;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use kube::core::ObjectList;
use prost::Message as _;
use serde_json::Value;
use serde_json::json;

use super::Args;
use super::BUDGET;
use super::FILL_CONCURRENCY;
use super::report::Row;
use super::report::System;

/// The etcd key prefix of the listed collection.
const ETCD_PREFIX: &str = "/bench/list/";

/// The media type of Protobuf in the flavor `apiary dev` serves.
const PROTOBUF: &str = "application/vnd.platform.protobuf";

/// The prefix of an enveloped Protobuf body (`k8s\0`).
const PROTOBUF_PREFIX: &[u8] = b"k8s\0";

/// Creates ConfigMaps `list-<from>` .. `list-<to - 1>` with `value_size`-byte values, spread
/// over the replicas.
pub async fn fill_apiary(
    replicas: &[HttpClient],
    from: u64,
    to: u64,
    value_size: usize,
) -> Result<(), HarnessError> {
    let value = objects::payload(value_size);
    let replicas = replicas.to_vec();
    let result = load::run(FILL_CONCURRENCY, to - from, BUDGET, move |i| {
        let client = replicas[(i as usize) % replicas.len()].clone();
        let body = objects::configmap(&format!("list-{}", from + i), &[("v", &value)]);
        async move {
            expect(
                client.post(&objects::configmaps_path(), &body).await,
                StatusCode::CREATED,
            )
        }
    })
    .await;
    filled("apiary", to - from, &result)
}

/// Puts keys `/bench/list/<from>` .. `<to - 1>` with `value_size`-byte values.
pub async fn fill_etcd(
    members: &[HttpClient],
    from: u64,
    to: u64,
    value_size: usize,
) -> Result<(), HarnessError> {
    let value = Bytes::from(objects::payload(value_size));
    let members = members.to_vec();
    let result = load::run(FILL_CONCURRENCY, to - from, BUDGET, move |i| {
        let client = members[(i as usize) % members.len()].clone();
        let body = etcd_cluster::put_body(&format!("{ETCD_PREFIX}{}", from + i), &value);
        async move { expect(client.post("/v3/kv/put", &body).await, StatusCode::OK) }
    })
    .await;
    filled("etcd", to - from, &result)
}

fn filled(system: &str, count: u64, result: &load::LevelResult) -> Result<(), HarnessError> {
    println!(
        "{system}: filled {count} objects in {:.1}s ({:.0}/s)",
        result.elapsed.as_secs_f64(),
        result.per_second()
    );
    match &result.first_error {
        Some(e) => Err(HarnessError::UnexpectedStatus {
            what: format!("filling {system}"),
            status: StatusCode::INTERNAL_SERVER_ERROR,
            body: e.clone(),
        }),
        None => Ok(()),
    }
}

/// Full and paged list rows of Apiary on `client` (a replica in `role`).
pub async fn apiary_rows(
    args: &Args,
    role: &str,
    client: &HttpClient,
    server: u32,
) -> Result<Vec<Row>, HarnessError> {
    let expected = count_items(client, &objects::configmaps_path()).await?;
    let full = |client: HttpClient| async move {
        count_items(&client, &objects::configmaps_path())
            .await
            .map_err(|e| e.to_string())
    };
    let page = args.page;
    let paged = move |client: HttpClient| async move { traverse_apiary(&client, page).await };
    let lists = (System::Apiary, role, server);
    let mut rows = rows(args, lists, client, expected, full, paged).await;
    let protobuf = client.clone().with_header("accept", PROTOBUF)?;
    let cpu = Cpu::start(server);
    let level = load::run(1, args.lists, BUDGET, move |_| {
        let client = protobuf.clone();
        async move { same(count_protobuf_items(&client).await?, expected) }
    })
    .await;
    let json_row = format!("LIST {expected} objects, one response, {role}");
    let workload = format!("LIST {expected} objects, one response, Protobuf, {role}");
    cpu.report(System::Apiary, &workload, args.lists);
    rows.push(Row::latency(System::Apiary, workload, &level).against(json_row));
    Ok(rows)
}

/// Full and paged range rows of etcd's JSON gateway on `client` (a member in `role`),
/// linearizable.
pub async fn etcd_gateway_rows(
    args: &Args,
    role: &str,
    client: &HttpClient,
    server: u32,
) -> Result<Vec<Row>, HarnessError> {
    let full = |client: HttpClient| async move {
        let (keys, _) = etcd_range(&client, ETCD_PREFIX, 0).await?;
        Ok(keys.len() as u64)
    };
    let page = args.page;
    let paged = move |client: HttpClient| async move { traverse_etcd(&client, page).await };
    let lists = (System::EtcdGateway, role, server);
    Ok(rows(args, lists, client, args.objects, full, paged).await)
}

/// Full and paged range rows of etcd's native gRPC API on `kv` (a member in `role`),
/// linearizable.
pub async fn etcd_native_rows(
    args: &Args,
    role: &str,
    kv: &KvClient,
    server: u32,
) -> Result<Vec<Row>, HarnessError> {
    let full = |kv: KvClient| async move {
        let (keys, _) = etcd_native::range(kv, ETCD_PREFIX, prefix_end(), 0).await?;
        Ok(keys.len() as u64)
    };
    let page = args.page;
    let paged = move |kv: KvClient| async move { traverse_etcd_native(kv, page).await };
    let lists = (System::Etcd, role, server);
    Ok(rows(args, lists, kv, args.objects, full, paged).await)
}

/// Measures `full` and `paged` (each answers how many objects it saw, which must be
/// `expected`) `--lists` times, one at a time, on the replica of `system` in `role` whose
/// process is `server` (its CPU time per list is printed, and the bench's own).
async fn rows<C, F, FF, P, PF>(
    args: &Args,
    (system, role, server): (System, &str, u32),
    client: &C,
    expected: u64,
    full: F,
    paged: P,
) -> Vec<Row>
where
    C: Clone + Send + Sync + 'static,
    F: Fn(C) -> FF + Send + Sync + 'static,
    FF: Future<Output = Result<u64, String>> + Send + 'static,
    P: Fn(C) -> PF + Send + Sync + 'static,
    PF: Future<Output = Result<u64, String>> + Send + 'static,
{
    let counted = |client: C, list: Arc<dyn Fn(C) -> BoxedCount + Send + Sync>| {
        load::run(1, args.lists, BUDGET, move |_| {
            let seen = list(client.clone());
            async move { same(seen.await?, expected) }
        })
    };
    let full_name = format!("LIST {expected} objects, one response, {role}");
    let paged_name = format!("LIST {expected} objects, pages of {}, {role}", args.page);
    let cpu = Cpu::start(server);
    let full_level = counted(client.clone(), Arc::new(move |c| Box::pin(full(c)))).await;
    cpu.report(system, &full_name, args.lists);
    let cpu = Cpu::start(server);
    let paged_level = counted(client.clone(), Arc::new(move |c| Box::pin(paged(c)))).await;
    cpu.report(system, &paged_name, args.lists);
    vec![
        Row::latency(system, full_name, &full_level),
        Row::latency(system, paged_name, &paged_level),
    ]
}

/// The CPU time the serving process and the bench itself spent from a start, per list: a
/// figure the machine's other load changes much less than latency.
struct Cpu {
    server: u32,
    start: (f64, f64),
}

impl Cpu {
    fn start(server: u32) -> Self {
        Self {
            server,
            start: (cpu_ms(&server.to_string()), cpu_ms("self")),
        }
    }

    fn report(self, system: System, workload: &str, lists: u64) {
        let (server, client) = (cpu_ms(&self.server.to_string()), cpu_ms("self"));
        let per = |now: f64, then: f64| (now - then) / lists.max(1) as f64;
        println!(
            "{system:?} {workload}: CPU per list: server {:.1} ms, bench client {:.1} ms",
            per(server, self.start.0),
            per(client, self.start.1),
        );
    }
}

/// The user and system CPU time of process `pid` (or `self`) so far, in ms (0 if unreadable).
fn cpu_ms(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) end with `)`.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime are fields 14 and 15, the 12th and 13th after the name; 100 ticks/s.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) * 10.0
}

/// A list in flight, answering how many objects it saw.
type BoxedCount = Pin<Box<dyn Future<Output = Result<u64, String>> + Send>>;

fn same(got: u64, expected: u64) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("listed {got} objects, expected {expected}"))
    }
}

async fn count_items(client: &HttpClient, path: &str) -> Result<u64, HarnessError> {
    let reply = client.get(path).await?.expect(StatusCode::OK, "list")?;
    let list = configmaps(&reply, path)?;
    Ok(list.items.len() as u64)
}

/// The whole collection read in Protobuf and decoded into k8s-pb's `ConfigMapList` (the
/// envelope `runtime.Unknown` first, then its `raw` bytes); the number of items.
async fn count_protobuf_items(client: &HttpClient) -> Result<u64, String> {
    let body = ok_body(
        client
            .get(&objects::configmaps_path())
            .await
            .map_err(|e| e.to_string())?,
    )?;
    let enveloped = body
        .strip_prefix(PROTOBUF_PREFIX)
        .ok_or("the list is not enveloped Protobuf")?;
    let unknown = Unknown::decode(enveloped).map_err(|e| e.to_string())?;
    let list = ConfigMapList::decode(unknown.raw.unwrap_or_default().as_slice())
        .map_err(|e| e.to_string())?;
    Ok(list.items.len() as u64)
}

/// The body of `reply` decoded as a typed `ConfigMapList`, as a Kubernetes client does.
fn configmaps(reply: &Reply, path: &str) -> Result<ObjectList<ConfigMap>, HarnessError> {
    serde_json::from_slice(&reply.body).map_err(|source| HarnessError::NotJson {
        uri: path.to_owned(),
        status: reply.status,
        source,
    })
}

/// Reads every page of the collection; the number of items seen.
async fn traverse_apiary(client: &HttpClient, page: usize) -> Result<u64, String> {
    let mut seen = 0;
    let mut token = String::new();
    loop {
        let mut path = format!("{}?limit={page}", objects::configmaps_path());
        if !token.is_empty() {
            path.push_str("&continue=");
            path.push_str(&token);
        }
        let list = client
            .get(&path)
            .await
            .and_then(|r| r.expect(StatusCode::OK, "paged list"))
            .and_then(|r| configmaps(&r, &path))
            .map_err(|e| e.to_string())?;
        seen += list.items.len() as u64;
        match list.metadata.continue_ {
            Some(next) if !next.is_empty() => token = next,
            _ => return Ok(seen),
        }
    }
}

/// The first key after every key of the prefix.
fn prefix_end() -> String {
    format!("{}0", ETCD_PREFIX.trim_end_matches('/'))
}

/// One range of etcd keys from `start` to the end of the prefix, at most `limit` (0: all):
/// the keys, and whether more remain.
async fn etcd_range(
    client: &HttpClient,
    start: &str,
    limit: usize,
) -> Result<(Vec<String>, bool), String> {
    let end = prefix_end();
    let body = json!({
        "key": STANDARD.encode(start),
        "range_end": STANDARD.encode(end),
        "limit": limit,
    });
    let reply = client
        .send_bytes(
            Method::POST,
            "/v3/kv/range",
            Some(Bytes::from(body.to_string())),
        )
        .await
        .map_err(|e| e.to_string())?;
    let range: Value = serde_json::from_slice(&ok_body(reply)?).map_err(|e| e.to_string())?;
    let keys = range["kvs"]
        .as_array()
        .map(|kvs| {
            kvs.iter()
                .filter_map(|kv| kv["key"].as_str())
                .filter_map(|k| STANDARD.decode(k).ok())
                .map(|k| String::from_utf8_lossy(&k).into_owned())
                .collect()
        })
        .unwrap_or_default();
    Ok((keys, range["more"].as_bool().unwrap_or(false)))
}

/// Reads the whole prefix `page` keys at a time; the number of keys seen.
async fn traverse_etcd(client: &HttpClient, page: usize) -> Result<u64, String> {
    let mut seen = 0;
    let mut start = ETCD_PREFIX.to_owned();
    loop {
        let (keys, more) = etcd_range(client, &start, page).await?;
        seen += keys.len() as u64;
        match keys.last() {
            Some(last) if more => start = format!("{last}\0"),
            _ => return Ok(seen),
        }
    }
}

/// Reads the whole prefix `page` keys at a time through the gRPC API; the number of keys seen.
async fn traverse_etcd_native(kv: KvClient, page: usize) -> Result<u64, String> {
    let mut seen = 0;
    let end = prefix_end();
    let mut start = ETCD_PREFIX.as_bytes().to_vec();
    loop {
        let (keys, more) = etcd_native::range(kv.clone(), start, end.clone(), page).await?;
        seen += keys.len() as u64;
        match keys.last() {
            Some(last) if more => {
                start = last.clone();
                start.push(0);
            }
            _ => return Ok(seen),
        }
    }
}

fn ok_body(reply: Reply) -> Result<Bytes, String> {
    if reply.status == StatusCode::OK {
        Ok(reply.body)
    } else {
        Err(format!("{}: {}", reply.status, reply.text()))
    }
}

fn expect(reply: apiary_tests::error::Result<Reply>, status: StatusCode) -> Result<(), String> {
    match reply {
        Ok(r) if r.status == status => Ok(()),
        Ok(r) => Err(format!("{}: {}", r.status, r.text())),
        Err(e) => Err(e.to_string()),
    }
}
