//! The controllers' client: JSON requests sent through the API's own router
//! (`tower::ServiceExt::oneshot`), so they pass authentication, flow control, authorization,
//! admission and audit as a client's do. The caller's identity rides in the
//! [`InProcessUser`] extension, which only in-process code can set. Their `User-Agent` names
//! the binary first, as Kubernetes' components' do, so their writes' managedFields entries
//! name `apiary` as the manager.

use apiary_api::auth::InProcessUser;
use apiary_api::auth::LOOPBACK_USER;
use apiary_api::auth::SYSTEM_MASTERS;
use apiary_api::auth::UserInfo;
use axum::Router;
use axum::body::Body;
use http::Method;
use http::Request;
use http::StatusCode;
use http_body_util::BodyExt;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower::ServiceExt;

/// The media type of JSON bodies.
const JSON: &str = "application/json";

/// The media type of a JSON merge patch.
const MERGE_PATCH: &str = "application/merge-patch+json";

/// Items per page when a controller walks a large collection of whole objects page by page:
/// it holds at most this many decoded objects at once.
pub const LIST_PAGE: usize = 500;

/// Why a controller's request failed.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The API answered with an error status (a conflict, a refusal, unavailability): the next
    /// pass reads the store again and retries.
    #[error("{method} {path}: {status}: {message}")]
    Status {
        /// The request's method.
        method: Method,
        /// The request's path.
        path: String,
        /// The answer's status.
        status: StatusCode,
        /// The `Status` message, if any.
        message: String,
    },
    /// The request or its answer could not be built or read.
    #[error("{method} {path}: {reason}")]
    Exchange {
        /// The request's method.
        method: Method,
        /// The request's path.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// Sends a controller's requests through the router as `user`.
#[derive(Clone)]
pub struct InProcessClient {
    api: Router,
    user: UserInfo,
}

impl InProcessClient {
    /// A client of `api` acting as `user`.
    pub fn new(api: Router, user: UserInfo) -> Self {
        Self { api, user }
    }

    /// A client of `api` acting as the server itself: the loopback user, a member of
    /// `system:masters` (as kube-apiserver's own loopback client).
    pub fn loopback(api: Router) -> Self {
        Self {
            api,
            user: UserInfo {
                name: LOOPBACK_USER.to_owned(),
                groups: vec![SYSTEM_MASTERS.to_owned()],
                ..UserInfo::default()
            },
        }
    }

    /// The `User-Agent` of this client's requests, in the form of Kubernetes' components
    /// (`<binary>/<version> (<os>/<arch>) <user>`).
    fn user_agent(&self) -> String {
        format!(
            "apiary/v{} ({}/{}) {}",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH,
            self.user.name
        )
    }

    /// The items of the list at `path`.
    pub async fn list(&self, path: &str) -> Result<Vec<Value>, ControllerError> {
        let list = self.send(Method::GET, path, None).await?;
        Ok(
            match list.and_then(|mut l| l.get_mut("items").map(Value::take)) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            },
        )
    }

    /// One page of the list at `path` (a collection path without a query): at most
    /// `limit` items after the continue token `token` (`None`: from the start), with the
    /// token of the next page, `None` on the last. Every page reads the store at the first
    /// page's revision. Items are decoded as `T`, so a controller that reads a few fields of
    /// every object skips the rest of each without building it.
    pub async fn list_page<T: DeserializeOwned>(
        &self,
        path: &str,
        token: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<T>, Option<String>), ControllerError> {
        // Continue tokens are URL-safe base64: they go into the query as they are.
        let uri = match token {
            Some(token) => format!("{path}?limit={limit}&continue={token}"),
            None => format!("{path}?limit={limit}"),
        };
        let Some(page) = self
            .send_as::<Page<T>>(Method::GET, &uri, None, JSON)
            .await?
        else {
            return Ok((Vec::new(), None));
        };
        let next = page.metadata.continue_token.filter(|t| !t.is_empty());
        Ok((page.items, next))
    }

    /// The object at `path`, `None` when it does not exist.
    pub async fn get(&self, path: &str) -> Result<Option<Value>, ControllerError> {
        self.send(Method::GET, path, None).await
    }

    /// Creates `object` in the collection at `path`; a collection not found (its namespace
    /// does not exist yet) is an error, to be retried.
    pub async fn create(&self, path: &str, object: &Value) -> Result<(), ControllerError> {
        match self.send(Method::POST, path, Some(object)).await? {
            Some(_) => Ok(()),
            None => Err(ControllerError::Status {
                method: Method::POST,
                path: path.to_owned(),
                status: StatusCode::NOT_FOUND,
                message: "not found".to_owned(),
            }),
        }
    }

    /// Replaces the object at `path` with `object` (its `resourceVersion` makes it conditional).
    pub async fn update(&self, path: &str, object: &Value) -> Result<(), ControllerError> {
        self.send(Method::PUT, path, Some(object)).await.map(drop)
    }

    /// Deletes the object at `path` if its uid is still `uid`; one already gone is fine.
    pub async fn delete(&self, path: &str, uid: &str) -> Result<(), ControllerError> {
        let options = serde_json::json!({
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "preconditions": {"uid": uid},
        });
        self.delete_with(path, &options).await.map(drop)
    }

    /// Deletes the object at `path` with `options` (a `DeleteOptions`); the answer (the object
    /// still held by finalizers or a grace period, or a `Status`), `None` when it was gone.
    pub async fn delete_with(
        &self,
        path: &str,
        options: &Value,
    ) -> Result<Option<Value>, ControllerError> {
        self.send(Method::DELETE, path, Some(options)).await
    }

    /// Changes the object at `path` with a JSON merge patch (RFC 7386); the object as it now
    /// is, `None` when it does not exist.
    pub async fn merge_patch(
        &self,
        path: &str,
        patch: &Value,
    ) -> Result<Option<Value>, ControllerError> {
        self.send_as(Method::PATCH, path, Some(patch), MERGE_PATCH)
            .await
    }

    /// Sends one JSON request; the answer's object, `None` for 404.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Option<Value>, ControllerError> {
        self.send_as(method, path, body, JSON).await
    }

    /// Sends one request whose body has the media type `content_type`; the answer's object
    /// decoded as `T`, `None` for 404.
    async fn send_as<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        content_type: &str,
    ) -> Result<Option<T>, ControllerError> {
        let exchange = |reason: String| ControllerError::Exchange {
            method: method.clone(),
            path: path.to_owned(),
            reason,
        };
        let body = match body {
            Some(value) => {
                Body::from(serde_json::to_vec(value).map_err(|e| exchange(e.to_string()))?)
            }
            None => Body::empty(),
        };
        let mut request = Request::builder()
            .method(method.clone())
            .uri(path)
            .header(http::header::USER_AGENT, self.user_agent())
            .header(http::header::ACCEPT, JSON)
            .header(http::header::CONTENT_TYPE, content_type)
            .body(body)
            .map_err(|e| exchange(e.to_string()))?;
        request
            .extensions_mut()
            .insert(InProcessUser(self.user.clone()));
        let response = self
            .api
            .clone()
            .oneshot(request)
            .await
            .map_err(|e| exchange(e.to_string()))?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| exchange(e.to_string()))?
            .to_bytes();
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let message = value["message"].as_str().unwrap_or_default().to_owned();
            return Err(ControllerError::Status {
                method,
                path: path.to_owned(),
                status,
                message,
            });
        }
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| exchange(format!("the answer cannot be read: {e}")))
    }
}

/// A page of a list, as [`InProcessClient::list_page`] reads it.
#[derive(Deserialize)]
struct Page<T> {
    #[serde(default)]
    metadata: PageMeta,
    #[serde(default = "Vec::new")]
    items: Vec<T>,
}

/// What a page's `metadata` tells: where the next page starts.
#[derive(Deserialize, Default)]
struct PageMeta {
    #[serde(rename = "continue")]
    continue_token: Option<String>,
}
