//! A watch as a client sees it: `GET ...?watch=1` answered with a stream of JSON events
//! (`{"type":"ADDED","object":{...}}`), read one event at a time, each within a deadline.

use std::time::Duration;

use http::Method;
use http::StatusCode;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;

use crate::error::HarnessError;
use crate::error::Result;
use crate::http_client::HttpClient;

/// One watch event.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    /// The object (a Status for `ERROR`).
    pub object: Value,
}

impl WatchEvent {
    /// The object's `metadata.resourceVersion` as a revision.
    pub fn revision(&self) -> Option<u64> {
        self.object["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|rv| rv.parse().ok())
    }

    /// The object's `metadata.name`.
    pub fn name(&self) -> Option<&str> {
        self.object["metadata"]["name"].as_str()
    }
}

/// An open watch.
pub struct EventStream {
    uri: String,
    body: Incoming,
    /// Bytes received but not yet parsed into an event.
    buffer: Vec<u8>,
}

impl EventStream {
    /// Opens the watch `path` (its query must ask for `watch=1`) through `client`; the server
    /// must answer 200 OK.
    pub async fn open(client: &HttpClient, path: &str) -> Result<Self> {
        let (status, body) = client.get_streaming(path).await?;
        let uri = format!("{}{path}", client.base());
        if status != StatusCode::OK {
            let body = body
                .collect()
                .await
                .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
                .unwrap_or_default();
            return Err(HarnessError::UnexpectedStatus {
                what: format!("watch {uri}"),
                status,
                body,
            });
        }
        Ok(Self {
            uri,
            body,
            buffer: Vec::new(),
        })
    }

    /// The next event, waiting at most `limit`; `None` when the server ended the stream.
    pub async fn next(&mut self, limit: Duration) -> Result<Option<WatchEvent>> {
        match tokio::time::timeout(limit, self.next_unbounded()).await {
            Ok(event) => event,
            Err(_) => Err(HarnessError::Timeout {
                method: Method::GET,
                uri: format!("the next event of {}", self.uri),
                after: limit,
            }),
        }
    }

    async fn next_unbounded(&mut self) -> Result<Option<WatchEvent>> {
        loop {
            if let Some(value) = self.take_value()? {
                return Ok(Some(WatchEvent {
                    kind: value["type"].as_str().unwrap_or_default().to_owned(),
                    object: value["object"].clone(),
                }));
            }
            let Some(frame) = self.body.frame().await else {
                return Ok(None);
            };
            let frame = frame.map_err(|source| HarnessError::Body {
                method: Method::GET,
                uri: self.uri.clone(),
                source,
            })?;
            if let Ok(data) = frame.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }

    /// Parses one complete JSON value off the front of the buffer, if it holds one.
    fn take_value(&mut self) -> Result<Option<Value>> {
        let mut values = serde_json::Deserializer::from_slice(&self.buffer).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                let used = values.byte_offset();
                self.buffer.drain(..used);
                Ok(Some(value))
            }
            Some(Err(e)) if e.is_eof() => Ok(None),
            None => Ok(None),
            Some(Err(source)) => Err(HarnessError::NotJson {
                uri: self.uri.clone(),
                status: StatusCode::OK,
                source,
            }),
        }
    }
}
