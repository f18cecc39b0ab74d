//! The audit flags and the webhook backend (issue 13, item 3): flags parse with kube-apiserver's
//! names and defaults and bad ones stop start-up naming the problem; the webhook posts
//! `EventList`s over real TLS (CA and client certificate from its kubeconfig) to a server run
//! here, in batches, truncated, and without blocking a request in batch mode.

use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use apiary_api::audit::Backend;
use apiary_api::audit::BatchSettings;
use apiary_api::audit::Event;
use apiary_api::audit::Level;
use apiary_api::audit::Stage;
use apiary_api::audit::TruncateSettings;
use apiary_api::audit::WebhookBackend;
use apiary_api::audit::WebhookMode;
use apiary_api::audit::WebhookSettings;
use apiary_api::audit::event::EventUser;
use apiary_api::flavor::Flavor;
use apiary_node::audit::AuditError;
use apiary_node::audit::AuditSettings;
use apiary_node::audit::webhook::TlsWebhook;
use apiary_node::cli::Cli;
use apiary_node::cli::Command;
use apiary_node::config::ApiTlsFiles;
use apiary_node::dev::DevPki;
use apiary_node::tls;
use base64::Engine;
use clap::Parser;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

fn serve_args(extra: &[&str]) -> Vec<String> {
    let mut argv: Vec<String> = [
        "apiary",
        "serve",
        "--name=n",
        "--data-dir=/d",
        "--initial-cluster=n=https://127.0.0.1:1",
        "--tls-cert-file=s",
        "--tls-private-key-file=k",
        "--peer-cert-file=p",
        "--peer-key-file=k",
        "--peer-trusted-ca-file=c",
    ]
    .map(str::to_owned)
    .to_vec();
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    argv
}

fn audit_settings(extra: &[&str]) -> Result<AuditSettings, AuditError> {
    let Command::Serve(serve) = Cli::try_parse_from(serve_args(extra))
        .expect("parse")
        .command
    else {
        panic!("not serve");
    };
    AuditSettings::from_args(&serve.audit, Flavor::Kubernetes)
}

#[test]
fn audit_flags_have_kube_defaults_and_dev_passes_them_on() {
    let Command::Serve(serve) = Cli::try_parse_from(serve_args(&[])).expect("parse").command else {
        panic!("not serve");
    };
    let audit = &serve.audit;
    assert_eq!(audit.audit_policy_file, None);
    assert_eq!(audit.audit_log_format, "json");
    assert_eq!(
        (
            audit.audit_log_maxage,
            audit.audit_log_maxbackup,
            audit.audit_log_maxsize
        ),
        (0, 0, 0)
    );
    assert_eq!(audit.audit_webhook_mode, "batch");
    assert_eq!(audit.audit_webhook_batch_buffer_size, 10_000);
    assert_eq!(audit.audit_webhook_batch_max_size, 400);
    assert_eq!(audit.audit_webhook_batch_max_wait, Duration::from_secs(30));
    assert!(audit.audit_webhook_batch_throttle_enable);
    assert_eq!(audit.audit_webhook_initial_backoff, Duration::from_secs(10));
    assert!(!audit.audit_webhook_truncate_enabled);
    assert_eq!(audit.audit_webhook_truncate_max_batch_size, 10_485_760);
    assert_eq!(audit.audit_webhook_truncate_max_event_size, 102_400);

    let Command::Dev(dev) = Cli::try_parse_from([
        "apiary",
        "dev",
        "--audit-policy-file=policy.yaml",
        "--audit-log-path=audit.log",
        "--audit-log-maxbackup=3",
        "--audit-webhook-truncate-enabled",
    ])
    .expect("parse")
    .command
    else {
        panic!("not dev");
    };
    let flags: Vec<String> = dev
        .audit
        .replica_flags(Path::new("/tmp/dev/node-1"))
        .into_iter()
        .map(|f| f.into_string().expect("utf-8"))
        .collect();
    let policy = std::path::absolute("policy.yaml").expect("absolute");
    assert!(flags.contains(&format!("--audit-policy-file={}", policy.display())));
    assert!(flags.contains(&"--audit-log-path=/tmp/dev/node-1/audit.log".to_owned()));
    assert!(flags.contains(&"--audit-log-maxbackup=3".to_owned()));
    assert!(flags.contains(&"--audit-webhook-truncate-enabled=true".to_owned()));
    // Every flag a replica gets parses as `apiary serve` flags.
    let mut argv = serve_args(&[]);
    argv.extend(flags);
    Cli::try_parse_from(argv).expect("replica flags parse");
}

#[test]
fn bad_audit_flags_stop_start_up_naming_the_problem() {
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        format!("--audit-policy-file={}", path.display())
    };
    let chain = |e: AuditError| apiary_node::error_chain(&e);
    let good = write(
        "good.yaml",
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    );
    assert!(audit_settings(&[&good]).is_ok());
    let missing = format!("--audit-policy-file={}", dir.path().join("none").display());
    assert!(chain(audit_settings(&[&missing]).expect_err("missing")).contains("cannot read"));
    let bad = write(
        "bad.yaml",
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n",
    );
    let problem = chain(audit_settings(&[&bad]).expect_err("bad level"));
    assert!(
        problem.contains("bad.yaml") && problem.contains("does not parse"),
        "{problem}"
    );
    let empty = write(
        "empty.yaml",
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
    );
    assert!(chain(audit_settings(&[&empty]).expect_err("empty")).contains("at least one rule"));
    let format = audit_settings(&["--audit-log-format=xml"]).expect_err("format");
    assert!(chain(format).contains("\"xml\""));
    let mode = audit_settings(&["--audit-webhook-mode=sometimes"]).expect_err("mode");
    assert!(chain(mode).contains("blocking-strict"));
    let zero = audit_settings(&["--audit-webhook-batch-max-size=0"]).expect_err("zero");
    assert_eq!(
        zero,
        AuditError::NotPositive {
            flag: "audit-webhook-batch-max-size"
        }
    );
    assert!(audit_settings(&["--audit-webhook-batch-throttle-qps=-1"]).is_err());
    assert!(audit_settings(&["--audit-log-format=legacy"]).is_ok());
}

/// What the webhook server received: each post's events, and whether the client presented
/// a certificate.
#[derive(Default)]
struct Received {
    posts: Mutex<Vec<Vec<Value>>>,
    client_certificates: Mutex<Vec<bool>>,
}

impl Received {
    fn posts(&self) -> Vec<Vec<Value>> {
        self.posts.lock().expect("lock").clone()
    }

    async fn wait_for_events(&self, n: usize) -> Vec<Vec<Value>> {
        for _ in 0..500 {
            if self.posts().iter().map(Vec::len).sum::<usize>() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.posts()
    }
}

/// A TLS webhook server on a loopback port, certificates from `pki`; answers 200 to posts.
async fn webhook_server(pki: &DevPki) -> (u16, Arc<Received>) {
    tls::install_crypto_provider();
    let client_ca = tls::CaFile::load(&pki.ca.cert_path).expect("client CA");
    let config = tls::api_server_config(
        &ApiTlsFiles {
            cert: pki.serving[0].cert_path.clone(),
            key: pki.serving[0].key_path.clone(),
            client_ca: Some(pki.ca.cert_path.clone()),
        },
        &[client_ca],
    )
    .expect("server TLS");
    let acceptor = TlsAcceptor::from(config);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let received = Arc::new(Received::default());
    let state = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let Ok(tls) = acceptor.accept(tcp).await else {
                continue;
            };
            let presented = tls.get_ref().1.peer_certificates().is_some();
            state
                .client_certificates
                .lock()
                .expect("lock")
                .push(presented);
            let state = state.clone();
            let service = hyper::service::service_fn(move |request: http::Request<_>| {
                let state = state.clone();
                async move {
                    let body: hyper::body::Incoming = request.into_body();
                    let bytes = body.collect().await.expect("body").to_bytes();
                    let list: Value = serde_json::from_slice(&bytes).expect("JSON");
                    assert_eq!(list["kind"], "EventList");
                    assert_eq!(list["apiVersion"], "audit.k8s.io/v1");
                    let items = list["items"].as_array().expect("items").clone();
                    state.posts.lock().expect("lock").push(items);
                    Ok::<_, std::convert::Infallible>(http::Response::new(String::new()))
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service),
            );
        }
    });
    (port, received)
}

/// A kubeconfig for the server on `port`: the CA inline, the client certificate as files
/// next to it (relative paths).
fn kubeconfig(dir: &Path, pki: &DevPki, port: u16) -> std::path::PathBuf {
    std::fs::write(dir.join("client.crt"), &pki.admin.cert_pem).expect("cert");
    std::fs::write(dir.join("client.key"), &pki.admin.key_pem).expect("key");
    let ca = base64::engine::general_purpose::STANDARD.encode(&pki.ca.cert_pem);
    let text = format!(
        "apiVersion: v1\nkind: Config\n\
         clusters:\n- name: hook\n  cluster:\n    server: https://127.0.0.1:{port}/audit\n    certificate-authority-data: {ca}\n\
         users:\n- name: apiserver\n  user:\n    client-certificate: client.crt\n    client-key: client.key\n\
         contexts:\n- name: hook\n  context:\n    cluster: hook\n    user: apiserver\n\
         current-context: hook\n"
    );
    let path = dir.join("webhook.kubeconfig");
    std::fs::write(&path, text).expect("kubeconfig");
    path
}

fn event(id: usize, object_bytes: usize) -> Event {
    let now = chrono::Utc::now();
    Event {
        kind: "Event",
        api_version: "audit.k8s.io/v1",
        level: Level::Request,
        audit_id: format!("id-{id}"),
        stage: Stage::ResponseComplete,
        request_uri: "/api/v1/namespaces/default/configmaps".into(),
        verb: "create".into(),
        user: EventUser {
            username: "alice".into(),
            ..EventUser::default()
        },
        impersonated_user: None,
        authentication_metadata: None,
        source_ips: Vec::new(),
        user_agent: String::new(),
        object_ref: None,
        response_status: None,
        request_object: Some(serde_json::json!({"pad": "x".repeat(object_bytes)})),
        response_object: None,
        request_received_timestamp: now,
        stage_timestamp: now,
        annotations: Default::default(),
    }
}

fn ids(posts: &[Vec<Value>]) -> Vec<Vec<String>> {
    posts
        .iter()
        .map(|p| {
            p.iter()
                .map(|e| e["auditID"].as_str().expect("id").to_owned())
                .collect()
        })
        .collect()
}

struct Hook {
    _dir: tempfile::TempDir,
    received: Arc<Received>,
    transport: Arc<TlsWebhook>,
}

async fn hook() -> Hook {
    let dir = tempfile::tempdir().expect("dir");
    let pki = DevPki::load_or_generate(dir.path(), 1).expect("pki");
    let (port, received) = webhook_server(&pki).await;
    let config = kubeconfig(dir.path(), &pki, port);
    let transport = Arc::new(TlsWebhook::from_kubeconfig(&config).expect("kubeconfig"));
    Hook {
        _dir: dir,
        received,
        transport,
    }
}

fn batch(max_size: usize) -> WebhookSettings {
    WebhookSettings {
        mode: WebhookMode::Batch,
        batch: BatchSettings {
            buffer_size: 100,
            max_size,
            max_wait: Duration::from_millis(300),
            throttle: None,
        },
        truncate: None,
        initial_backoff: Duration::from_millis(10),
    }
}

#[tokio::test]
async fn batch_mode_posts_event_lists_over_tls_in_batches() {
    let hook = hook().await;
    let backend = WebhookBackend::new(hook.transport.clone(), batch(3), Flavor::Kubernetes);
    for id in 0..7 {
        assert!(backend.process(&event(id, 1)).await);
    }
    let posts = hook.received.wait_for_events(7).await;
    assert_eq!(
        ids(&posts),
        [
            vec!["id-0", "id-1", "id-2"],
            vec!["id-3", "id-4", "id-5"],
            vec!["id-6"]
        ]
    );
    assert_eq!(posts[0][0]["requestObject"]["pad"], "x");
    let presented = hook
        .received
        .client_certificates
        .lock()
        .expect("lock")
        .clone();
    assert!(
        !presented.is_empty() && presented.iter().all(|p| *p),
        "{presented:?}"
    );
    assert_eq!(
        presented.len(),
        1,
        "the three posts, one after the other, share one kept-alive connection"
    );
    assert_eq!(backend.dropped(), 0);
}

#[tokio::test]
async fn oversized_events_are_truncated_or_dropped_and_posts_split() {
    let hook = hook().await;
    let one = serde_json::to_vec(&event(0, 10)).expect("json").len();
    let mut settings = batch(10);
    settings.truncate = Some(TruncateSettings {
        max_event_bytes: one + 100,
        max_batch_bytes: 2 * one + 150,
    });
    let backend = WebhookBackend::new(hook.transport.clone(), settings, Flavor::Kubernetes);
    let mut huge = event(2, 10);
    huge.user.username = "u".repeat(10 * one);
    for e in [
        event(0, 10),
        event(1, 5000),
        huge,
        event(3, 10),
        event(4, 10),
    ] {
        backend.process(&e).await;
    }
    let posts = hook.received.wait_for_events(4).await;
    assert_eq!(ids(&posts), [vec!["id-0", "id-1"], vec!["id-3", "id-4"]]);
    let truncated = &posts[0][1];
    assert!(truncated.get("requestObject").is_none(), "{truncated}");
    assert_eq!(truncated["annotations"]["audit.k8s.io/truncated"], "true");
    assert!(posts[1][0]["requestObject"].is_object());
}

#[tokio::test]
async fn a_full_buffer_drops_and_counts_instead_of_blocking() {
    let hook = hook().await;
    let mut settings = batch(100);
    settings.batch.buffer_size = 2;
    let backend = WebhookBackend::new(hook.transport.clone(), settings, Flavor::Kubernetes);
    // Nothing here yields to the sending task: the queue fills after two events.
    for id in 0..10 {
        assert!(backend.process(&event(id, 1)).await);
    }
    assert_eq!(backend.dropped(), 8);
    let posts = hook.received.wait_for_events(2).await;
    assert_eq!(ids(&posts), [vec!["id-0", "id-1"]]);
}

#[tokio::test]
async fn blocking_modes_post_in_the_request_and_strict_reports_failures() {
    let hook = hook().await;
    let mut settings = batch(1);
    settings.mode = WebhookMode::Blocking;
    let blocking = WebhookBackend::new(hook.transport.clone(), settings, Flavor::Kubernetes);
    assert!(blocking.process(&event(0, 1)).await);
    // Posted before `process` returned.
    assert_eq!(ids(&hook.received.posts()), [vec!["id-0"]]);

    // A server that is gone: blocking carries on, blocking-strict reports the loss.
    let dir = tempfile::tempdir().expect("dir");
    let pki = DevPki::load_or_generate(dir.path(), 1).expect("pki");
    let closed = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let gone = Arc::new(
        TlsWebhook::from_kubeconfig(&kubeconfig(dir.path(), &pki, port)).expect("kubeconfig"),
    );
    let blocking = WebhookBackend::new(gone.clone(), settings, Flavor::Kubernetes);
    assert!(blocking.process(&event(1, 1)).await);
    settings.mode = WebhookMode::BlockingStrict;
    let strict = WebhookBackend::new(gone, settings, Flavor::Kubernetes);
    assert!(!strict.process(&event(2, 1)).await);
}

#[test]
fn unusable_webhook_kubeconfigs_are_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let write = |text: &str| {
        let path = dir.path().join("k");
        std::fs::write(&path, text).expect("write");
        TlsWebhook::from_kubeconfig(&path).err().expect("refused")
    };
    assert!(write("clusters: []\n").contains("no cluster"));
    assert!(write("clusters:\n- name: a\n  cluster:\n    server: http://x:1\n").contains("https"));
    assert!(
        write("clusters:\n- name: a\n  cluster:\n    server: https://x:1\n")
            .contains("certificate-authority")
    );
}
