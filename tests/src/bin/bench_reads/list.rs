//! LIST figures: a whole collection in one response, and a paged traversal (`limit` +
//! `continue` for Apiary, `limit` + the next key for etcd), each on the leader and a follower;
//! etcd's through its native gRPC API and through its JSON gateway, over the same keys.
//!
//! Each side's client does what its ordinary clients do with the answer: Apiary's reads the
//! whole body and decodes it into typed `ConfigMap`s (kube-rs' `Api::list`, client-go's typed
//! clients), the native etcd client decodes the protobuf range into `KeyValue`s.

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
use kube::core::ObjectList;
use serde_json::Value;
use serde_json::json;

use super::Args;
use super::BUDGET;
use super::FILL_CONCURRENCY;
use super::report::Row;
use super::report::System;

/// The etcd key prefix of the listed collection.
const ETCD_PREFIX: &str = "/bench/list/";

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
) -> Result<Vec<Row>, HarnessError> {
    let expected = count_items(client, &objects::configmaps_path()).await?;
    let full = |client: HttpClient| async move {
        count_items(&client, &objects::configmaps_path())
            .await
            .map_err(|e| e.to_string())
    };
    let page = args.page;
    let paged = move |client: HttpClient| async move { traverse_apiary(&client, page).await };
    Ok(rows(args, System::Apiary, role, client, expected, full, paged).await)
}

/// Full and paged range rows of etcd's JSON gateway on `client` (a member in `role`),
/// linearizable.
pub async fn etcd_gateway_rows(
    args: &Args,
    role: &str,
    client: &HttpClient,
) -> Result<Vec<Row>, HarnessError> {
    let full = |client: HttpClient| async move {
        let (keys, _) = etcd_range(&client, ETCD_PREFIX, 0).await?;
        Ok(keys.len() as u64)
    };
    let page = args.page;
    let paged = move |client: HttpClient| async move { traverse_etcd(&client, page).await };
    Ok(rows(
        args,
        System::EtcdGateway,
        role,
        client,
        args.objects,
        full,
        paged,
    )
    .await)
}

/// Full and paged range rows of etcd's native gRPC API on `kv` (a member in `role`),
/// linearizable.
pub async fn etcd_native_rows(
    args: &Args,
    role: &str,
    kv: &KvClient,
) -> Result<Vec<Row>, HarnessError> {
    let full = |kv: KvClient| async move {
        let (keys, _) = etcd_native::range(kv, ETCD_PREFIX, prefix_end(), 0).await?;
        Ok(keys.len() as u64)
    };
    let page = args.page;
    let paged = move |kv: KvClient| async move { traverse_etcd_native(kv, page).await };
    Ok(rows(args, System::Etcd, role, kv, args.objects, full, paged).await)
}

/// Measures `full` and `paged` (each answers how many objects it saw, which must be
/// `expected`) `--lists` times, one at a time.
async fn rows<C, F, FF, P, PF>(
    args: &Args,
    system: System,
    role: &str,
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
    let full_level = counted(client.clone(), Arc::new(move |c| Box::pin(full(c)))).await;
    let paged_level = counted(client.clone(), Arc::new(move |c| Box::pin(paged(c)))).await;
    vec![
        Row::latency(
            system,
            format!("LIST {expected} objects, one response, {role}"),
            &full_level,
        ),
        Row::latency(
            system,
            format!("LIST {expected} objects, pages of {}, {role}", args.page),
            &paged_level,
        ),
    ]
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
