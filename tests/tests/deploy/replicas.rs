//! Replicas started from command lines read out of `deploy/` files: each an `apiary serve`
//! child whose output goes to a log file, killed when dropped. [`Replicas::smoke`] is the
//! smoke test of a deployment (R-HA-012): every replica becomes ready and serves `default`, and
//! a config map created through one replica is read on every other, with the admin kubeconfig
//! `apiary certs` wrote.

use std::fs;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::binary::apiary_binary;
use apiary_tests::kubeconfig;
use apiary_tests::objects;
use apiary_tests::process;
use http::StatusCode;

/// Where the deploy files install the binary; the tests run the one cargo built instead.
pub const INSTALLED_BINARY: &str = "/usr/local/bin/apiary";

/// How long every replica gets to become ready and serve `default` (the tests start their
/// clusters in parallel on a small machine).
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// One replica to start: its name (the kubeconfig context) and its command line, program first.
pub struct ReplicaCommand {
    /// The replica's name.
    pub name: String,
    /// The program and its arguments, as the deploy file gives them.
    pub argv: Vec<String>,
}

/// Running replicas.
pub struct Replicas {
    logs: PathBuf,
    children: Vec<(String, Child)>,
}

impl Replicas {
    /// Starts every command (their program must be [`INSTALLED_BINARY`]), logging into `logs`.
    pub fn start(commands: Vec<ReplicaCommand>, logs: &Path) -> Self {
        let binary = apiary_binary().expect("the apiary binary (cargo build -p apiary-node)");
        let mut replicas = Self {
            logs: logs.to_owned(),
            children: Vec::new(),
        };
        for command in commands {
            let (program, args) = command.argv.split_first().expect("a command line");
            assert_eq!(program, INSTALLED_BINARY, "{}", command.name);
            let log = logs.join(format!("{}.log", command.name));
            let (out, err) = process::log_output(&log).expect("log file");
            let child = Command::new(&binary)
                .args(args)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .expect("apiary serve starts");
            replicas.children.push((command.name, child));
        }
        replicas
    }

    /// R-HA-012: every replica is ready and serves `default`; a config map created through the
    /// second replica is read back from every replica. Clients come from `kubeconfig`'s contexts
    /// (named as the replicas).
    pub async fn smoke(&self, kubeconfig_path: &Path) {
        let mut clients = Vec::new();
        for (name, _) in &self.children {
            let endpoint = kubeconfig::endpoint(kubeconfig_path, name)
                .await
                .unwrap_or_else(|e| panic!("context {name}: {e}"));
            clients.push((name.clone(), HttpClient::for_endpoint(&endpoint)));
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        for path in ["/readyz", "/api/v1/namespaces/default"] {
            for (name, client) in &clients {
                let waited = client
                    .wait_until_ok(path, deadline, Duration::from_millis(100), || {
                        self.check_alive()
                    })
                    .await;
                match waited {
                    Ok(Ok(())) => {}
                    Ok(Err(last)) => panic!("{path} of {name}: {last}\n{}", self.log_tails()),
                    Err(e) => panic!("{path} of {name}: {e}\n{}", self.log_tails()),
                }
            }
        }
        let list = objects::configmaps_path();
        let item = objects::configmap_path("deployed");
        let body = objects::configmap("deployed", &[("smoke", "test")]);
        let (writer, client) = &clients[1 % clients.len()];
        let created = client.post(&list, &body).await.expect("create");
        assert_eq!(
            created.status,
            StatusCode::CREATED,
            "create on {writer}: {}",
            created.text()
        );
        for (name, client) in &clients {
            let read = client.get(&item).await.expect("get");
            assert_eq!(
                read.status,
                StatusCode::OK,
                "get on {name}: {}",
                read.text()
            );
            let object = read.json(&item).expect("JSON");
            assert_eq!(object["data"]["smoke"], "test", "{name}");
        }
    }

    /// Fails once a replica has exited (it would never become ready).
    fn check_alive(&self) -> Result<(), HarnessError> {
        match self
            .children
            .iter()
            .find(|(_, child)| !process::is_alive(child.id()))
        {
            None => Ok(()),
            Some((name, _)) => Err(HarnessError::NotReady {
                what: name.clone(),
                waited: Duration::ZERO,
                last: format!("it exited\n{}", self.log_tails()),
            }),
        }
    }

    /// The last lines of every replica's log, for failure messages.
    fn log_tails(&self) -> String {
        let mut out = String::new();
        for (name, _) in &self.children {
            let text =
                fs::read_to_string(self.logs.join(format!("{name}.log"))).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(15)..];
            out.push_str(&format!("--- {name} ---\n{}\n", tail.join("\n")));
        }
        out
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            // A replica that already exited cannot be killed; reaping it is all that is left.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
