//! Raw connections to a replica, below any HTTP client: a TCP connection that never starts TLS,
//! a TLS connection that never sends a request, a request trickled one byte at a time, a request
//! with headers a well-behaved client would not send; and when the server closes them.
//!
//! TLS goes through [`apiary_raft::network::Connector`] with the kubeconfig's client settings,
//! offering only HTTP/1.1 in ALPN so that the bytes written are the request the server reads.

use std::time::Duration;
use std::time::Instant;

use apiary_raft::network::Connector;
use apiary_raft::network::MaybeTlsStream;
use http::Uri;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tower::Service;

use crate::error::HarnessError;
use crate::error::Result;
use crate::kubeconfig::Endpoint;

/// The ALPN protocol the raw TLS connections offer.
const HTTP_1_1: &[u8] = b"http/1.1";

/// How much of an answer [`RawConnection::exchange`] keeps; the rest is read and dropped.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// One open connection to a replica.
pub struct RawConnection {
    /// The replica's address, for messages.
    server: Uri,
    stream: MaybeTlsStream,
}

/// What the server sent on a connection until it closed it.
#[derive(Debug, Clone)]
pub struct RawAnswer {
    /// The first [`MAX_ANSWER_BYTES`] bytes received.
    pub bytes: Vec<u8>,
    /// Whether the server closed the connection (rather than the deadline passing first).
    pub closed: bool,
}

impl RawAnswer {
    /// The status code of the first HTTP/1.1 status line, if one arrived.
    pub fn status(&self) -> Option<u16> {
        let text = String::from_utf8_lossy(&self.bytes);
        let line = text.lines().next()?;
        let mut parts = line.split(' ');
        let version = parts.next()?;
        if !version.starts_with("HTTP/") {
            return None;
        }
        parts.next()?.parse().ok()
    }

    /// Everything received, as text, for messages and assertions on the body.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

impl RawConnection {
    /// A TLS connection to `endpoint`, handshake done (client certificate presented), offering
    /// only HTTP/1.1; nothing sent yet.
    pub async fn tls(endpoint: &Endpoint) -> Result<Self> {
        let mut config = (*endpoint.tls).clone();
        config.alpn_protocols = vec![HTTP_1_1.to_vec()];
        Self::dial(endpoint.server.clone(), Connector::new(Some(config.into()))).await
    }

    /// A plain TCP connection to `endpoint`'s address that never starts the TLS handshake.
    pub async fn tcp(endpoint: &Endpoint) -> Result<Self> {
        let server = endpoint.server.clone();
        let plain = Uri::builder()
            .scheme("http")
            .authority(server.authority().map(|a| a.as_str()).unwrap_or_default())
            .path_and_query("/")
            .build()
            .map_err(|source| HarnessError::BadRequest {
                uri: server.to_string(),
                source,
            })?;
        let mut connection = Self::dial(plain, Connector::new(None)).await?;
        connection.server = server;
        Ok(connection)
    }

    async fn dial(server: Uri, mut connector: Connector) -> Result<Self> {
        let stream = connector
            .call(server.clone())
            .await
            .map_err(|source| HarnessError::Connection {
                server: server.to_string(),
                source,
            })?
            .into_inner();
        Ok(Self { server, stream })
    }

    /// Writes `bytes`.
    pub async fn send(&mut self, bytes: &[u8]) -> Result<()> {
        let written = async {
            self.stream.write_all(bytes).await?;
            self.stream.flush().await
        };
        written.await.map_err(|source| HarnessError::Connection {
            server: self.server.to_string(),
            source,
        })
    }

    /// Writes `request` and reads the answer until the server closes the connection or `limit`
    /// has passed.
    pub async fn exchange(&mut self, request: &[u8], limit: Duration) -> Result<RawAnswer> {
        self.send(request).await?;
        Ok(self.read_until_closed(limit).await)
    }

    /// Reads what the server sends until it closes the connection (end of stream or a reset) or
    /// `limit` has passed.
    pub async fn read_until_closed(&mut self, limit: Duration) -> RawAnswer {
        let deadline = tokio::time::Instant::now() + limit;
        let mut bytes = Vec::new();
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
                Err(_elapsed) => {
                    return RawAnswer {
                        bytes,
                        closed: false,
                    };
                }
                Ok(Ok(0) | Err(_)) => {
                    return RawAnswer {
                        bytes,
                        closed: true,
                    };
                }
                Ok(Ok(n)) => {
                    let room = MAX_ANSWER_BYTES.saturating_sub(bytes.len());
                    bytes.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
    }

    /// Writes `bytes` one at a time, `pause` apart, while watching for the server to close the
    /// connection; stops when it does or when `limit` has passed since the first byte (after the
    /// last byte it only watches). Returns how long after the first byte the server closed the
    /// connection, or `None` when it still held it open at the end.
    pub async fn trickle(
        &mut self,
        bytes: &[u8],
        pause: Duration,
        limit: Duration,
    ) -> Option<Duration> {
        let start = Instant::now();
        let deadline = tokio::time::Instant::now() + limit;
        let mut chunk = [0u8; 1024];
        for byte in bytes {
            if self.stream.write_all(&[*byte]).await.is_err() || self.stream.flush().await.is_err()
            {
                return Some(start.elapsed());
            }
            let next_byte = tokio::time::Instant::now() + pause;
            // Answers the server sends meanwhile (a 408) are read and dropped; the end of the
            // stream or a reset is the close.
            loop {
                let wake = next_byte.min(deadline);
                match tokio::time::timeout_at(wake, self.stream.read(&mut chunk)).await {
                    Ok(Ok(0) | Err(_)) => return Some(start.elapsed()),
                    Ok(Ok(_)) => {}
                    Err(_elapsed) if wake == deadline => return None,
                    Err(_elapsed) => break,
                }
            }
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let answer = self.read_until_closed(left).await;
        answer.closed.then(|| start.elapsed())
    }
}
