//! A 3-member etcd cluster on loopback (Debian's `etcd-server` package), the benchmark's
//! baseline. Like Apiary, it runs with TLS between members and toward clients, and requires
//! client certificates. [`EtcdCluster::clients`] are clients of etcd's JSON gateway
//! (`/v3/kv/put`, `/v3/kv/range`); [`crate::etcd_native`] connects etcd's native gRPC clients
//! from [`EtcdCluster::client_urls`] and [`EtcdCluster::pki`].

use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::StatusCode;
use http::Uri;
use serde_json::json;
use tempfile::TempDir;

use crate::error::HarnessError;
use crate::error::Result;
use crate::http_client::HttpClient;
use crate::loopback_pki::LoopbackPki;
use crate::ports;
use crate::process;

/// The etcd executable, found on `PATH`.
pub const ETCD: &str = "etcd";

/// Offset of the peer ports from the client ports.
const PEER_OFFSET: u16 = 100;

/// A running etcd cluster; its members are killed and its directory removed when dropped.
pub struct EtcdCluster {
    dir: TempDir,
    members: Vec<Child>,
    clients: Vec<HttpClient>,
    urls: Vec<String>,
    pki: LoopbackPki,
}

/// Whether `etcd` can be run (it is on `PATH` and answers `--version`).
pub fn etcd_available() -> bool {
    Command::new(ETCD)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl EtcdCluster {
    /// Starts `members` etcd members on free loopback ports and waits up to `timeout` until
    /// every one reports itself healthy.
    pub async fn start(members: u16, timeout: Duration) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("apiary-bench-etcd-")
            .tempdir()
            .map_err(|source| HarnessError::Io {
                path: std::env::temp_dir(),
                source,
            })?;
        let offsets: Vec<u16> = (0..members)
            .chain((0..members).map(|i| PEER_OFFSET + i))
            .collect();
        let base = ports::free_base_port(&offsets)?;
        let pki = LoopbackPki::generate(dir.path())?;
        let name = |i: u16| format!("m{}", i + 1);
        let client_url = |i: u16| format!("https://127.0.0.1:{}", base + i);
        let peer_url = |i: u16| format!("https://127.0.0.1:{}", base + PEER_OFFSET + i);
        let initial_cluster: Vec<String> = (0..members)
            .map(|i| format!("{}={}", name(i), peer_url(i)))
            .collect();
        let initial_cluster = initial_cluster.join(",");
        let mut cluster = Self {
            dir,
            members: Vec::new(),
            clients: Vec::new(),
            urls: (0..members).map(client_url).collect(),
            pki,
        };
        for i in 0..members {
            let log_path = cluster.dir.path().join(format!("{}.log", name(i)));
            let (log, log_err) = process::log_output(&log_path)?;
            let child = Command::new(ETCD)
                .arg("--name")
                .arg(name(i))
                .arg("--data-dir")
                .arg(cluster.dir.path().join(name(i)))
                .arg("--listen-client-urls")
                .arg(client_url(i))
                .arg("--advertise-client-urls")
                .arg(client_url(i))
                .arg("--listen-peer-urls")
                .arg(peer_url(i))
                .arg("--initial-advertise-peer-urls")
                .arg(peer_url(i))
                .arg("--initial-cluster")
                .arg(&initial_cluster)
                .arg("--initial-cluster-state")
                .arg("new")
                .arg("--initial-cluster-token")
                .arg("apiary-bench")
                .arg("--cert-file")
                .arg(&cluster.pki.cert_file)
                .arg("--key-file")
                .arg(&cluster.pki.key_file)
                .arg("--trusted-ca-file")
                .arg(&cluster.pki.ca_file)
                .arg("--client-cert-auth")
                .arg("--peer-cert-file")
                .arg(&cluster.pki.cert_file)
                .arg("--peer-key-file")
                .arg(&cluster.pki.key_file)
                .arg("--peer-trusted-ca-file")
                .arg(&cluster.pki.ca_file)
                .arg("--peer-client-cert-auth")
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(log_err)
                .spawn()
                .map_err(|source| HarnessError::Spawn {
                    program: ETCD.to_owned(),
                    source,
                })?;
            cluster.members.push(child);
            let uri: Uri = client_url(i).parse().map_err(|_| HarnessError::NotReady {
                what: format!("etcd member {}", name(i)),
                waited: Duration::ZERO,
                last: "bad client URL".to_owned(),
            })?;
            cluster
                .clients
                .push(HttpClient::new(&uri, Some(cluster.pki.client.clone())));
        }
        cluster.wait_healthy(timeout).await?;
        Ok(cluster)
    }

    /// The directory holding the members' data and logs.
    pub fn dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// The process id of every member, in member order.
    pub fn pids(&self) -> Vec<u32> {
        self.members.iter().map(Child::id).collect()
    }

    /// The gateway client of every member, in member order.
    pub fn clients(&self) -> &[HttpClient] {
        &self.clients
    }

    /// The client URL (`https://127.0.0.1:port`) of every member, in member order.
    pub fn client_urls(&self) -> &[String] {
        &self.urls
    }

    /// The CA and the certificate the members serve and accept as a client's.
    pub fn pki(&self) -> &LoopbackPki {
        &self.pki
    }

    /// Kills member `index` (0-based) with SIGKILL, a crash without any clean-up, and waits
    /// until it is gone.
    pub fn kill_member(&mut self, index: usize) -> Result<()> {
        let member = self
            .members
            .get_mut(index)
            .ok_or(HarnessError::NoSuchReplica {
                index: index + 1,
                nodes: self.urls.len(),
            })?;
        member.kill().map_err(|source| HarnessError::Io {
            path: self.dir.path().to_path_buf(),
            source,
        })?;
        member.wait().map_err(|source| HarnessError::Io {
            path: self.dir.path().to_path_buf(),
            source,
        })?;
        Ok(())
    }

    async fn wait_healthy(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        for (i, client) in self.clients.iter().enumerate() {
            let probe = client.clone().with_timeout(Duration::from_secs(2));
            let waited = probe
                .wait_until_ok("/health", deadline, Duration::from_millis(100), || Ok(()))
                .await?;
            if let Err(last) = waited {
                return Err(HarnessError::NotReady {
                    what: format!("etcd member m{} in {}", i + 1, self.dir.path().display()),
                    waited: timeout,
                    last,
                });
            }
        }
        Ok(())
    }

    /// The index (0-based, member order) of the current leader, asked of member 0.
    pub async fn leader(&self) -> Result<usize> {
        for (i, client) in self.clients.iter().enumerate() {
            let uri = format!("{}/v3/maintenance/status", client.base());
            let status = client
                .post("/v3/maintenance/status", &json!({}))
                .await?
                .expect(StatusCode::OK, "etcd status")?
                .json(&uri)?;
            if status["leader"].is_string() && status["leader"] == status["header"]["member_id"] {
                return Ok(i);
            }
        }
        Err(HarnessError::NotReady {
            what: "an etcd leader".to_owned(),
            waited: Duration::ZERO,
            last: "no member reports itself as leader".to_owned(),
        })
    }
}

/// The JSON gateway body of a put of `value` at `key`.
pub fn put_body(key: &str, value: &[u8]) -> serde_json::Value {
    json!({ "key": STANDARD.encode(key), "value": STANDARD.encode(value) })
}

/// The JSON gateway body of a linearizable (the default) range read of one key.
pub fn range_body(key: &str) -> serde_json::Value {
    json!({ "key": STANDARD.encode(key) })
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for member in &mut self.members {
            let _ = member.kill();
            let _ = member.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_put_on_one_member_is_read_linearizably_on_another() {
        if !etcd_available() {
            eprintln!("NOTICE: etcd is not on PATH; skipping the etcd baseline test");
            return;
        }
        let cluster = EtcdCluster::start(3, Duration::from_secs(30))
            .await
            .unwrap();
        let leader = cluster.leader().await.unwrap();
        let follower = (leader + 1) % 3;
        let put = cluster.clients()[leader]
            .post("/v3/kv/put", &put_body("/k", b"value"))
            .await
            .unwrap();
        assert_eq!(put.status, StatusCode::OK, "{}", put.text());
        let range = cluster.clients()[follower]
            .post("/v3/kv/range", &range_body("/k"))
            .await
            .unwrap();
        assert_eq!(range.status, StatusCode::OK, "{}", range.text());
        let range = range.json("/v3/kv/range").unwrap();
        assert_eq!(range["kvs"][0]["value"], STANDARD.encode(b"value"));
    }
}
