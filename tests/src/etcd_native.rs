//! Native gRPC clients of an [`EtcdCluster`] (the `etcd-client` crate, over rustls with the
//! cluster's client certificate), the benchmark's native etcd baseline: one client, so one
//! HTTP/2 connection, per member, as Kubernetes' API server talks to etcd.

use std::time::Duration;

use etcd_client::Certificate;
use etcd_client::Client;
use etcd_client::ConnectOptions;
use etcd_client::GetOptions;
use etcd_client::Identity;
use etcd_client::KvClient;
use etcd_client::TlsOptions;
use etcd_client::WatchOptions;
use etcd_client::WatchStream;

use crate::error::HarnessError;
use crate::error::Result;
use crate::etcd_cluster::EtcdCluster;

/// Largest response a native client accepts: a whole 10,000 x 1 KiB range is about 11 MB, over
/// gRPC's default 4 MiB.
const MAX_RESPONSE: usize = 1 << 30;

/// One native client per member of `cluster`, in member order, each connected to that member
/// only; every request gives up after `timeout`.
pub async fn connect(cluster: &EtcdCluster, timeout: Duration) -> Result<Vec<Client>> {
    let mut clients = Vec::new();
    for member in 0..cluster.client_urls().len() {
        clients.push(connect_member(cluster, member, timeout).await?);
    }
    Ok(clients)
}

/// A native client of member `member` (0-based) of `cluster` alone, on a connection of its
/// own; every request gives up after `timeout`.
pub async fn connect_member(
    cluster: &EtcdCluster,
    member: usize,
    timeout: Duration,
) -> Result<Client> {
    let pki = cluster.pki();
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|source| HarnessError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let tls = TlsOptions::new()
        .ca_certificate(Certificate::from_pem(read(&pki.ca_file)?))
        .identity(Identity::from_pem(
            read(&pki.cert_file)?,
            read(&pki.key_file)?,
        ))
        .domain_name("127.0.0.1");
    let url = cluster
        .client_urls()
        .get(member)
        .cloned()
        .unwrap_or_default();
    let options = ConnectOptions::new()
        .with_tls(tls)
        .with_timeout(timeout)
        .with_connect_timeout(timeout);
    Client::connect([url], Some(options))
        .await
        .map_err(|e| HarnessError::NotReady {
            what: format!("a native etcd client of m{}", member + 1),
            waited: Duration::ZERO,
            last: e.to_string(),
        })
}

/// A watch of the changes under `prefix` from now on, once etcd confirmed it created the
/// watch.
pub async fn watch_prefix(
    client: &Client,
    prefix: &str,
) -> std::result::Result<WatchStream, String> {
    let options = WatchOptions::new().with_prefix();
    let mut stream =
        (client.watch_client().watch(prefix, Some(options)).await).map_err(|e| e.to_string())?;
    match stream.message().await {
        Ok(Some(reply)) if reply.created() => Ok(stream),
        Ok(_) => Err(format!("the watch of {prefix} was not created")),
        Err(e) => Err(e.to_string()),
    }
}

/// The KV client of `client`, accepting responses as large as a whole listed collection.
pub fn kv(client: &Client) -> KvClient {
    client.kv_client().max_decoding_message_size(MAX_RESPONSE)
}

/// The index (member order) of the member that reports itself the leader, asked of every
/// member that answers.
pub async fn leader(clients: &[Client]) -> Result<usize> {
    let mut last = "no member reports itself as leader".to_owned();
    for (i, client) in clients.iter().enumerate() {
        match client.maintenance_client().status().await {
            Ok(status) => {
                let member = status.header().map(|h| h.member_id());
                if member == Some(status.leader()) {
                    return Ok(i);
                }
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(HarnessError::NotReady {
        what: "an etcd leader".to_owned(),
        waited: Duration::ZERO,
        last,
    })
}

/// A put of `value` at `key`, as a result the load generator counts.
pub async fn put(mut kv: KvClient, key: String, value: Vec<u8>) -> std::result::Result<(), String> {
    kv.put(key, value, None)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A linearizable (the default) read of one key, which must exist.
pub async fn get(mut kv: KvClient, key: String) -> std::result::Result<(), String> {
    let reply = kv.get(key.clone(), None).await.map_err(|e| e.to_string())?;
    if reply.kvs().is_empty() {
        Err(format!("{key} not found"))
    } else {
        Ok(())
    }
}

/// A linearizable range of the keys from `start` up to (not including) `end`, at most `limit`
/// of them (0: all): the keys, and whether more remain.
pub async fn range(
    mut kv: KvClient,
    start: impl Into<Vec<u8>>,
    end: impl Into<Vec<u8>>,
    limit: usize,
) -> std::result::Result<(Vec<Vec<u8>>, bool), String> {
    let options = GetOptions::new()
        .with_range(end)
        .with_limit(i64::try_from(limit).unwrap_or(i64::MAX));
    let reply = kv
        .get(start, Some(options))
        .await
        .map_err(|e| e.to_string())?;
    let keys = reply.kvs().iter().map(|kv| kv.key().to_vec()).collect();
    Ok((keys, reply.more()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::etcd_cluster::etcd_available;

    #[tokio::test]
    async fn a_native_put_on_the_leader_is_ranged_linearizably_on_a_follower() {
        if !etcd_available() {
            eprintln!("NOTICE: etcd is not on PATH; skipping the native etcd baseline test");
            return;
        }
        let cluster = EtcdCluster::start(3, Duration::from_secs(30))
            .await
            .unwrap();
        let clients = connect(&cluster, Duration::from_secs(10)).await.unwrap();
        let leader = leader(&clients).await.unwrap();
        let follower = (leader + 1) % 3;
        for k in ["/p/a", "/p/b", "/p/c"] {
            put(kv(&clients[leader]), k.to_owned(), b"v".to_vec())
                .await
                .unwrap();
        }
        get(kv(&clients[follower]), "/p/b".to_owned())
            .await
            .unwrap();
        assert!(
            get(kv(&clients[follower]), "/p/z".to_owned())
                .await
                .is_err()
        );
        let (keys, more) = range(kv(&clients[follower]), "/p/", "/p0", 2)
            .await
            .unwrap();
        assert_eq!(keys, vec![b"/p/a".to_vec(), b"/p/b".to_vec()]);
        assert!(more);
        let (keys, more) = range(kv(&clients[follower]), "/p/b\0", "/p0", 0)
            .await
            .unwrap();
        assert_eq!(keys, vec![b"/p/c".to_vec()]);
        assert!(!more);
    }
}
