//! The node's side of the operating API ([`apiary_api::admin`]): membership, status and
//! snapshots of the replica and its cluster. Each area has its own module; this one routes a
//! request to it by the first segment of its path.

pub mod members;
mod snapshot;
pub mod status;

use std::sync::Arc;

use apiary_api::admin::AdminRequest;
use apiary_api::admin::ClusterAdmin;
use apiary_api::error::ApiError;
use apiary_raft::replica::Replica;
use axum::response::Response;

/// The operating API of one replica.
pub struct NodeAdmin {
    /// The replica served.
    pub replica: Arc<Replica>,
}

#[async_trait::async_trait]
impl ClusterAdmin for NodeAdmin {
    async fn serve(&self, request: AdminRequest<'_>) -> Result<Response, ApiError> {
        let area = request.path.split('/').next().unwrap_or_default();
        match area {
            "members" => members::serve(self, request).await,
            "status" => status::serve(self, request).await,
            "snapshot" => snapshot::serve(self, request).await,
            _ => Err(ApiError::UnknownResource),
        }
    }
}
