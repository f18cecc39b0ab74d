//! `GET /apiary/v1/snapshot`: a backup of the replica asked, taken after a linearizable read
//! index (so it is not stale), in the backup format of [`apiary_raft::state_machine::Backup`]
//! that `apiary snapshot status` and `restore` read.

use apiary_api::admin::AdminRequest;
use apiary_api::error::ApiError;
use apiary_api::group::GroupResource;
use apiary_raft::replica::ReadError;
use axum::body::Body;
use axum::response::Response;
use http::Method;
use http::header;

use super::NodeAdmin;

/// The media type of a backup.
const BACKUP_MEDIA_TYPE: &str = "application/octet-stream";

/// Serves the `snapshot` area.
pub(super) async fn serve(
    admin: &NodeAdmin,
    request: AdminRequest<'_>,
) -> Result<Response, ApiError> {
    if request.path != "snapshot" {
        return Err(ApiError::UnknownResource);
    }
    if request.method != Method::GET {
        return Err(ApiError::MethodNotAllowed {
            resource: GroupResource::new("", "snapshot"),
            name: String::new(),
        });
    }
    let backup = admin.replica.backup().await.map_err(read_error)?;
    let revision = backup.info.revision;
    let bytes = tokio::task::spawn_blocking(move || backup.encode())
        .await
        .map_err(|e| ApiError::Internal(format!("encoding the backup: {e}")))?;
    tracing::info!(revision, bytes = bytes.len(), "backup served");
    Response::builder()
        .header(header::CONTENT_TYPE, BACKUP_MEDIA_TYPE)
        .header(header::CONTENT_LENGTH, bytes.len())
        .body(Body::from(bytes))
        .map_err(|e| ApiError::Internal(e.to_string()))
}

/// A failed read index: nothing was done, so retrying may work unless raft stopped.
fn read_error(error: ReadError) -> ApiError {
    match error {
        ReadError::Fatal { reason } => ApiError::Internal(reason),
        other => ApiError::ServiceUnavailable(other.to_string()),
    }
}
