//! The etcd baseline: the same writes and quorum reads on a 3-member etcd cluster, through
//! etcd's native gRPC API (the baseline the Apiary/etcd ratios are against) and then through its
//! JSON gateway (the second etcd row), one after the other on the same cluster. Both spread
//! writes round-robin over one client per member, as Apiary's rows do over its replicas, and read
//! linearizably on a follower.

use std::time::Duration;

use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::etcd_cluster;
use apiary_tests::etcd_cluster::EtcdCluster;
use apiary_tests::etcd_native;
use apiary_tests::load;
use apiary_tests::objects;
use bytes::Bytes;
use etcd_client::KvClient;
use http::Method;
use http::StatusCode;

use super::Args;
use super::READ_SET;
use super::Scores;
use super::max_level;
use super::ok;
use super::report;

/// What etcd scored through each of its APIs.
pub struct EtcdScores {
    /// Through the native gRPC API.
    pub native: Scores,
    /// Through the JSON gateway.
    pub gateway: Scores,
}

/// Deadline of one native request, like the gateway client's.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

pub async fn bench(args: &Args) -> Result<EtcdScores, HarnessError> {
    let cluster = EtcdCluster::start(3, Duration::from_secs(60)).await?;
    let clients = etcd_native::connect(&cluster, REQUEST_TIMEOUT).await?;
    let leader = etcd_native::leader(&clients).await?;
    let follower = if leader == 0 { 1 } else { 0 };
    println!(
        "etcd: 3 members in {}, leader m{}, linearizable reads on m{}",
        cluster.dir().display(),
        leader + 1,
        follower + 1
    );
    let kvs: Vec<KvClient> = clients.iter().map(etcd_native::kv).collect();
    let native = native(args, &kvs, follower).await?;
    let gateway = gateway(args, cluster.clients(), follower).await?;
    Ok(EtcdScores { native, gateway })
}

/// Puts and linearizable gets through etcd's gRPC API, keys under `/bench/native/`.
async fn native(args: &Args, kvs: &[KvClient], follower: usize) -> Result<Scores, HarnessError> {
    let value = objects::payload(args.value_size).into_bytes();
    let budget = Duration::from_secs(args.level_budget);
    let puts = |level: usize, requests: u64, prefix: String| {
        let kvs = kvs.to_vec();
        let value = value.clone();
        load::run(level, requests, budget, move |i| {
            let kv = kvs[(i as usize) % kvs.len()].clone();
            etcd_native::put(kv, format!("{prefix}{i}"), value.clone())
        })
    };
    let warm = puts(
        max_level(args),
        args.warmup,
        "/bench/native/warm/".to_owned(),
    )
    .await;
    report("etcd gRPC warm-up", &warm);
    let mut writes = Vec::new();
    for &level in &args.levels {
        let result = puts(level, args.requests, format!("/bench/native/c{level}/")).await;
        report("etcd gRPC put", &result);
        writes.push(result);
    }
    for k in 0..READ_SET {
        etcd_native::put(
            kvs[0].clone(),
            format!("/bench/native/read/{k}"),
            value.clone(),
        )
        .await
        .map_err(|e| filling_failed("filling the etcd read set (gRPC)", e))?;
    }
    let reader = kvs[follower].clone();
    let mut reads = Vec::new();
    for &level in &args.levels {
        let reader = reader.clone();
        let result = load::run_warmed(level, args.reads, budget, move |i| {
            etcd_native::get(
                reader.clone(),
                format!("/bench/native/read/{}", i % READ_SET),
            )
        })
        .await;
        report("etcd gRPC linearizable get", &result);
        reads.push(result);
    }
    Ok(Scores { writes, reads })
}

/// Puts and linearizable ranges through etcd's JSON gateway, keys under `/bench/`.
async fn gateway(
    args: &Args,
    members: &[HttpClient],
    follower: usize,
) -> Result<Scores, HarnessError> {
    let value = Bytes::from(objects::payload(args.value_size));
    let budget = Duration::from_secs(args.level_budget);
    let warm = {
        let members = members.to_vec();
        let value = value.clone();
        load::run(max_level(args), args.warmup, budget, move |i| {
            let client = members[(i as usize) % members.len()].clone();
            let body = etcd_cluster::put_body(&format!("/bench/warm/{i}"), &value);
            async move { ok(client.post("/v3/kv/put", &body).await) }
        })
        .await
    };
    report("etcd gateway warm-up", &warm);
    let mut writes = Vec::new();
    for &level in &args.levels {
        let members = members.to_vec();
        let value = value.clone();
        let result = load::run(level, args.requests, budget, move |i| {
            let client = members[(i as usize) % members.len()].clone();
            let body = etcd_cluster::put_body(&format!("/bench/c{level}/{i}"), &value);
            async move { ok(client.post("/v3/kv/put", &body).await) }
        })
        .await;
        report("etcd gateway put", &result);
        writes.push(result);
    }
    for k in 0..READ_SET {
        let body = etcd_cluster::put_body(&format!("/bench/read/{k}"), &value);
        ok(members[0].post("/v3/kv/put", &body).await)
            .map_err(|e| filling_failed("filling the etcd read set (gateway)", e))?;
    }
    let reader = members[follower].clone();
    let mut reads = Vec::new();
    for &level in &args.levels {
        let reader = reader.clone();
        let result = load::run_warmed(level, args.reads, budget, move |i| {
            let reader = reader.clone();
            let body = Bytes::from(
                etcd_cluster::range_body(&format!("/bench/read/{}", i % READ_SET)).to_string(),
            );
            async move {
                ok(reader
                    .send_bytes(Method::POST, "/v3/kv/range", Some(body))
                    .await)
            }
        })
        .await;
        report("etcd gateway range", &result);
        reads.push(result);
    }
    Ok(Scores { writes, reads })
}

fn filling_failed(what: &str, error: String) -> HarnessError {
    HarnessError::UnexpectedStatus {
        what: what.to_owned(),
        status: StatusCode::INTERNAL_SERVER_ERROR,
        body: error,
    }
}
