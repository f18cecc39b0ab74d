//! A small pooled HTTP(S) client for one server, with a deadline on every request, sending a
//! kubeconfig user's [`Credentials`]: a bearer token (`token`, `tokenFile`, a plugin's) on
//! every request, a plugin's client certificate on every connection (a new certificate starts
//! a new connection pool), a plugin run again once after a 401. HTTP/1.1 by default (a pool
//! of connections, one per concurrent request); [`HttpClient::new_http2`] speaks HTTP/2 only,
//! every request multiplexed on one connection, as client-go does toward kube-apiserver.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::RwLock;
use std::time::Duration;
use std::time::Instant;

use bytes::Bytes;
use http::HeaderMap;
use http::Method;
use http::Request;
use http::StatusCode;
use http::Uri;
use http::header;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::ClientConfig;
use rustls::RootCertStore;
use serde_json::Value;

use crate::error::HarnessError;
use crate::error::Result;
use crate::exec_credential::Credential;
use crate::kubeconfig::Credentials;
use crate::kubeconfig::Endpoint;
use crate::loopback_pki::ClientCert;
use crate::loopback_pki::roots_client_config;
use apiary_raft::network::Connector;

/// How long a request may take, connection and body included, unless set otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// A client for one server (one Apiary replica or one etcd member). Cheap to clone; clones share
/// the connection pool.
#[derive(Clone)]
pub struct HttpClient {
    /// `scheme://host:port` of the server; request paths are appended to it.
    base: String,
    inner: Arc<RwLock<Pool>>,
    timeout: Duration,
    /// The user's credentials besides the TLS settings' client certificate.
    auth: Option<Arc<UserAuth>>,
    /// Headers sent with every request (an authenticating proxy's `X-Remote-User`).
    headers: HeaderMap,
    /// HTTP/2 only (ALPN `h2`, one multiplexed connection) instead of pooled HTTP/1.1.
    http2: bool,
}

type Pool = Client<Connector, Full<Bytes>>;

/// A user's credentials and what sending them needs.
struct UserAuth {
    credentials: Credentials,
    /// The server's CAs, for a connection pool with a plugin's certificate.
    roots: Arc<RootCertStore>,
    /// The plugin's certificate the pool presents now.
    certificate: Mutex<Option<ClientCert>>,
}

/// The ALPN protocol id of HTTP/2.
const ALPN_H2: &[u8] = b"h2";

/// A pool of connections made with `tls`: HTTP/1.1, or with `http2` one HTTP/2 connection
/// (offered by ALPN) that carries every request.
fn pool(tls: Option<Arc<ClientConfig>>, http2: bool) -> Pool {
    let mut builder = Client::builder(TokioExecutor::new());
    builder.pool_idle_timeout(Duration::from_secs(30));
    if !http2 {
        return builder.build(Connector::new(tls));
    }
    let tls = tls.map(|tls| {
        let mut tls = tls.as_ref().clone();
        tls.alpn_protocols = vec![ALPN_H2.to_vec()];
        Arc::new(tls)
    });
    builder.http2_only(true).build(Connector::new(tls))
}

/// A complete response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers (`Warning` among them).
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl Reply {
    /// The body parsed as JSON (`uri` only names the request in the error).
    pub fn json(&self, uri: &str) -> Result<Value> {
        serde_json::from_slice(&self.body).map_err(|source| HarnessError::NotJson {
            uri: uri.to_owned(),
            status: self.status,
            source,
        })
    }

    /// The body as text, for messages.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// `Ok(self)` when the status is `expected`, otherwise [`HarnessError::UnexpectedStatus`]
    /// naming `what`.
    pub fn expect(self, expected: StatusCode, what: &str) -> Result<Self> {
        if self.status == expected {
            Ok(self)
        } else {
            Err(HarnessError::UnexpectedStatus {
                what: what.to_owned(),
                status: self.status,
                body: self.text(),
            })
        }
    }
}

impl HttpClient {
    /// A client for the server at `base` (`https://127.0.0.1:6443`), using `tls` for HTTPS.
    pub fn new(base: &Uri, tls: Option<Arc<ClientConfig>>) -> Self {
        Self {
            base: base.to_string().trim_end_matches('/').to_owned(),
            inner: Arc::new(RwLock::new(pool(tls, false))),
            timeout: DEFAULT_TIMEOUT,
            headers: HeaderMap::new(),
            auth: None,
            http2: false,
        }
    }

    /// A client for the server at `base` that speaks HTTP/2 only: one connection, negotiated
    /// by ALPN over `tls` (prior knowledge over `http://`), carries every request at once.
    pub fn new_http2(base: &Uri, tls: Option<Arc<ClientConfig>>) -> Self {
        Self {
            base: base.to_string().trim_end_matches('/').to_owned(),
            inner: Arc::new(RwLock::new(pool(tls, true))),
            timeout: DEFAULT_TIMEOUT,
            headers: HeaderMap::new(),
            auth: None,
            http2: true,
        }
    }

    /// A client of a kubeconfig context: its server, TLS settings and user's credentials.
    pub fn for_endpoint(endpoint: &Endpoint) -> Self {
        let mut client = Self::new(&endpoint.server, Some(endpoint.tls.clone()));
        client.auth = Some(Arc::new(UserAuth {
            credentials: endpoint.credentials.clone(),
            roots: endpoint.roots.clone(),
            certificate: Mutex::new(None),
        }));
        client
    }

    /// The bearer token to send, if any; a plugin's new certificate replaces the pool first.
    async fn authorize(&self) -> Result<Option<String>> {
        let Some(auth) = &self.auth else {
            return Ok(None);
        };
        match &auth.credentials {
            Credentials::None => Ok(None),
            Credentials::Token(token) => Ok(Some(token.clone())),
            Credentials::TokenFile(path) => std::fs::read_to_string(path)
                .map(|token| Some(token.trim().to_owned()))
                .map_err(|source| HarnessError::Io {
                    path: path.clone(),
                    source,
                }),
            Credentials::Exec(plugin) => match plugin.credential().await? {
                Credential::Token(token) => Ok(Some(token)),
                Credential::Certificate(cert) => {
                    let mut current = auth
                        .certificate
                        .lock()
                        .unwrap_or_else(|poison| poison.into_inner());
                    if current.as_ref() != Some(&cert) {
                        let roots = auth.roots.as_ref().clone();
                        let tls = roots_client_config(roots, Some(&cert))?;
                        *self.inner.write().unwrap_or_else(|p| p.into_inner()) =
                            pool(Some(tls), self.http2);
                        *current = Some(cert);
                    }
                    Ok(None)
                }
            },
        }
    }

    /// After a 401: whether a plugin's credential was dropped, so one retry may succeed.
    fn forget_credential(&self) -> bool {
        match self.auth.as_deref().map(|auth| &auth.credentials) {
            Some(Credentials::Exec(plugin)) => {
                plugin.forget();
                true
            }
            _ => false,
        }
    }

    /// The current connection pool.
    fn pool(&self) -> Pool {
        self.inner.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A request for `uri` with this client's headers and `bearer` token.
    fn request(
        &self,
        method: &Method,
        uri: &str,
        bearer: Option<&str>,
        body: Option<(&str, Bytes)>,
    ) -> Result<Request<Full<Bytes>>> {
        let mut builder = Request::builder().method(method.clone()).uri(uri);
        if !self.headers.contains_key(header::ACCEPT) {
            builder = builder.header(header::ACCEPT, "application/json");
        }
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(token) = bearer {
            builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some((content_type, _)) = &body {
            builder = builder.header(header::CONTENT_TYPE, *content_type);
        }
        builder
            .body(Full::new(body.map(|(_, bytes)| bytes).unwrap_or_default()))
            .map_err(|source| HarnessError::BadRequest {
                uri: uri.to_owned(),
                source,
            })
    }

    /// The same client (same pool) sending `name: value` with every request too (appended, so
    /// a name may repeat; an `Accept` replaces the default `application/json`).
    pub fn with_header(mut self, name: &'static str, value: &str) -> Result<Self> {
        let value = http::HeaderValue::from_str(value).map_err(|_| HarnessError::BadHeader {
            name: name.to_owned(),
        })?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// The same client (same pool) with another per-request deadline.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// `scheme://host:port` of the server.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends `method path` with an optional JSON body and reads the whole answer.
    pub async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Reply> {
        let payload = body.map(|b| Bytes::from(b.to_string()));
        self.send_bytes(method, path, payload).await
    }

    /// Sends `method path` with an optional body already encoded as JSON.
    pub async fn send_bytes(
        &self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<Reply> {
        match body {
            Some(body) => {
                self.send_typed(method, path, "application/json", body)
                    .await
            }
            None => self.exchange(method, path, None).await,
        }
    }

    /// Sends `method path` with `body` of media type `content_type` (a patch, YAML) and reads
    /// the whole answer.
    pub async fn send_typed(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Bytes,
    ) -> Result<Reply> {
        self.exchange(method, path, Some((content_type, body)))
            .await
    }

    /// One request and its whole answer, within the client's deadline; after a 401 with a
    /// plugin's credential, the plugin runs again and the request is sent once more.
    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, Bytes)>,
    ) -> Result<Reply> {
        let reply = self.exchange_once(&method, path, body.clone()).await?;
        if reply.status == StatusCode::UNAUTHORIZED && self.forget_credential() {
            return self.exchange_once(&method, path, body).await;
        }
        Ok(reply)
    }

    async fn exchange_once(
        &self,
        method: &Method,
        path: &str,
        body: Option<(&str, Bytes)>,
    ) -> Result<Reply> {
        let uri = format!("{}{}", self.base, path);
        let exchange = async {
            let bearer = self.authorize().await?;
            let request = self.request(method, &uri, bearer.as_deref(), body)?;
            let response =
                self.pool()
                    .request(request)
                    .await
                    .map_err(|source| HarnessError::Request {
                        method: method.clone(),
                        uri: uri.clone(),
                        source,
                    })?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|source| HarnessError::Body {
                    method: method.clone(),
                    uri: uri.clone(),
                    source,
                })?
                .to_bytes();
            Ok(Reply {
                status,
                headers,
                body,
            })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(reply) => reply,
            Err(_) => Err(HarnessError::Timeout {
                method: method.clone(),
                uri,
                after: self.timeout,
            }),
        }
    }

    /// `GET path`, returning the status and the body as it arrives (a watch); only the
    /// response head is bounded by the deadline.
    pub async fn get_streaming(&self, path: &str) -> Result<(StatusCode, Incoming)> {
        let uri = format!("{}{}", self.base, path);
        let bearer = self.authorize().await?;
        let request = self.request(&Method::GET, &uri, bearer.as_deref(), None)?;
        match tokio::time::timeout(self.timeout, self.pool().request(request)).await {
            Ok(Ok(response)) => Ok((response.status(), response.into_body())),
            Ok(Err(source)) => Err(HarnessError::Request {
                method: Method::GET,
                uri,
                source,
            }),
            Err(_) => Err(HarnessError::Timeout {
                method: Method::GET,
                uri,
                after: self.timeout,
            }),
        }
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Reply> {
        self.send(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Reply> {
        self.send(Method::POST, path, Some(body)).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, path: &str, body: &Value) -> Result<Reply> {
        self.send(Method::PUT, path, Some(body)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Result<Reply> {
        self.send(Method::DELETE, path, None).await
    }

    /// GETs `path` every `pause` until it answers 200 OK (`Ok(Ok(()))`) or `deadline` has
    /// passed (`Ok(Err(last))`, `last` the last answer or failure, for the caller's message).
    /// `alive` runs before every attempt; its error ends the wait at once (a server process
    /// that exited will never answer).
    pub async fn wait_until_ok(
        &self,
        path: &str,
        deadline: Instant,
        pause: Duration,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<std::result::Result<(), String>> {
        loop {
            alive()?;
            let last = match self.get(path).await {
                Ok(reply) if reply.status == StatusCode::OK => return Ok(Ok(())),
                Ok(reply) => format!("{}: {}", reply.status, reply.text()),
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Ok(Err(last));
            }
            tokio::time::sleep(pause).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use kube::config::ExecConfig;
    use tokio::io::AsyncReadExt;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    use super::*;
    use crate::exec_credential::ClusterInfo;
    use crate::exec_credential::ExecPlugin;

    /// A plain HTTP server that records every request's `Authorization` and answers 401 to
    /// the token `tok-1`, 200 to anything else.
    async fn recording_server() -> (Uri, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base: Uri = format!("http://{}", listener.local_addr().expect("addr"))
            .parse()
            .expect("uri");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let record = record.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while socket.read(&mut byte).await.is_ok_and(|n| n == 1) {
                        head.push(byte[0]);
                        if !head.ends_with(b"\r\n\r\n") {
                            continue;
                        }
                        let text = String::from_utf8_lossy(&head).to_lowercase();
                        let authorization = text
                            .lines()
                            .find_map(|line| line.strip_prefix("authorization: "))
                            .unwrap_or_default()
                            .to_owned();
                        let status = if authorization == "bearer tok-1" {
                            "401 Unauthorized"
                        } else {
                            "200 OK"
                        };
                        record.lock().expect("lock").push(authorization);
                        let answer = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
                        if socket.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                        head.clear();
                    }
                });
            }
        });
        (base, seen)
    }

    /// A plain-HTTP HTTP/2 server (prior knowledge) answering every request with its
    /// protocol version, counting the connections it accepted.
    async fn http2_server() -> (Uri, Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::AtomicUsize;
        use std::sync::atomic::Ordering;

        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base: Uri = format!("http://{}", listener.local_addr().expect("addr"))
            .parse()
            .expect("uri");
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let service = hyper::service::service_fn(|request: Request<Incoming>| async move {
                    let version = format!("{:?}", request.version());
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from(
                        version,
                    ))))
                });
                tokio::spawn(
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(hyper_util::rt::TokioIo::new(socket), service),
                );
            }
        });
        (base, accepted)
    }

    #[tokio::test]
    async fn an_http2_client_multiplexes_concurrent_requests_on_one_connection() {
        let (server, accepted) = http2_server().await;
        let client = HttpClient::new_http2(&server, None);
        let requests = (0..16).map(|i| {
            let client = client.clone();
            async move { client.get(&format!("/r{i}")).await }
        });
        for reply in futures::future::join_all(requests).await {
            let reply = reply.expect("answered");
            assert_eq!(reply.status, StatusCode::OK);
            assert_eq!(reply.text(), "HTTP/2.0");
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    // R-ACC-076, R-ACC-077: a plugin's token goes out as a bearer token and is cached; after
    // a 401 the plugin runs again and the request is retried once with its new token.
    #[tokio::test]
    async fn plugin_tokens_are_sent_cached_and_renewed_after_a_401() {
        let dir = tempfile::tempdir().expect("dir");
        let runs = dir.path().join("runs");
        let plugin = dir.path().join("plugin");
        let script = format!(
            "#!/bin/sh\necho run >> '{runs}'\nprintf '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"tok-%s\"}}}}' \"$(wc -l < '{runs}' | tr -d ' ')\"\n",
            runs = runs.display()
        );
        std::fs::write(&plugin, script).expect("plugin");
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).expect("mode");
        let exec = ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1beta1".to_owned()),
            command: Some(plugin.display().to_string()),
            args: None,
            env: None,
            drop_env: None,
            install_hint: None,
            interactive_mode: None,
            provide_cluster_info: false,
            cluster: None,
            other: Default::default(),
        };
        let plugin = ExecPlugin::new(&exec, dir.path(), ClusterInfo::default()).expect("plugin");
        let (server, seen) = recording_server().await;
        let endpoint = Endpoint {
            context: "c".to_owned(),
            server,
            tls: roots_client_config(RootCertStore::empty(), None).expect("tls"),
            roots: Arc::new(RootCertStore::empty()),
            credentials: Credentials::Exec(Arc::new(plugin)),
        };
        let client = HttpClient::for_endpoint(&endpoint);
        assert_eq!(client.get("/a").await.expect("sent").status, StatusCode::OK);
        assert_eq!(client.get("/b").await.expect("sent").status, StatusCode::OK);
        let seen = seen.lock().expect("lock").clone();
        assert_eq!(seen, vec!["bearer tok-1", "bearer tok-2", "bearer tok-2"]);
    }
}
