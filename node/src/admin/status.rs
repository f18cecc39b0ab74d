//! The status area of the operating API (`GET /apiary/v1/status`): the cluster as the replica
//! asked sees it (members and roles from the leader's view, the effective version) and each
//! replica's own figures (term, commit and applied index, log bounds, newest snapshot, store
//! size, versions), asked of every member at once over the `report` peer RPC. A member that
//! does not answer in time is shown unreachable, one of a build without the RPC as reachable
//! but not reporting; the answer is still a 200.

use std::time::Duration;

use apiary_api::admin::AdminRequest;
use apiary_api::error::ApiError;
use apiary_raft::replica::Member;
use apiary_raft::replica::ReplicaReport;
use axum::Json;
use axum::response::IntoResponse;
use axum::response::Response;
use http::Method;
use serde_json::Value;
use serde_json::json;

use super::NodeAdmin;
use super::members::API_VERSION;
use super::members::change;
use super::members::member_json;
use crate::cluster_version::ClusterVersions;
use crate::cluster_version::binary_version;

/// How long one member may take to report.
const REPORT_DEADLINE: Duration = Duration::from_secs(2);

/// Serves `status`.
pub async fn serve(admin: &NodeAdmin, request: AdminRequest<'_>) -> Result<Response, ApiError> {
    if request.path != "status" {
        return Err(ApiError::UnknownResource);
    }
    if request.method != Method::GET {
        return Err(ApiError::MethodNotAllowed {
            resource: apiary_api::group::GroupResource::new("apiary", "status"),
            name: String::new(),
        });
    }
    Ok(Json(status(admin).await?).into_response())
}

/// The `ClusterStatus` answer.
async fn status(admin: &NodeAdmin) -> Result<Value, ApiError> {
    let replica = &admin.replica;
    let (members, leader_view) = match replica.members_from_leader().await {
        Ok(members) => (members, true),
        Err(e) if e.is_retryable() => (replica.members(), false),
        Err(e) => return Err(change(e, 0)),
    };
    let reports = futures::future::join_all(
        members
            .iter()
            .map(|m| replica.report_of(&m.peer_url, REPORT_DEADLINE)),
    )
    .await;
    let versions = crate::cluster_version::read(replica).ok();
    let local = replica.status();
    let items: Vec<Value> = members
        .iter()
        .zip(reports)
        .map(|(member, report)| {
            let report = report.map_err(|e| apiary_raft::error_chain(&e));
            member_status(member, report, versions.as_ref())
        })
        .collect();
    Ok(json!({
        "kind": "ClusterStatus",
        "apiVersion": API_VERSION,
        "servedBy": local.id,
        "servedByVersion": binary_version(),
        "leader": local.leader,
        "term": local.term,
        "leaderView": leader_view,
        "effectiveVersion": versions.as_ref().map(|v| v.effective),
        "members": items,
    }))
}

/// One member: its place in the membership, its own report (or why there is none) and the
/// versions it recorded.
fn member_status(
    member: &Member,
    report: Result<Option<ReplicaReport>, String>,
    versions: Option<&ClusterVersions>,
) -> Value {
    let mut item = member_json(member);
    let fields = match report {
        Ok(None) => json!({"reachable": true, "reported": false}),
        Ok(Some(report)) => json!({
            "reachable": true,
            "reported": true,
            "running": report.running,
            "term": report.term,
            "leader": report.leader,
            "committed": report.committed,
            "applied": report.applied,
            "firstLogIndex": report.first_log_index,
            "lastLogIndex": report.last_log_index,
            "logEntries": log_entries(&report),
            "snapshotIndex": report.snapshot_index,
            "snapshotBytes": report.snapshot_bytes,
            "snapshotAgeSeconds": report.snapshot_age_seconds,
            "keys": report.keys,
            "storeBytes": report.store_bytes,
            "compacted": report.compacted,
        }),
        Err(error) => json!({"reachable": false, "error": error}),
    };
    let recorded = versions.and_then(|v| v.replicas.get(&member.id));
    let versions = recorded.map(|v| {
        json!({
            "binary": v.binary,
            "oldestProtocol": v.oldest_protocol,
            "newestProtocol": v.newest_protocol,
            "snapshotFormat": v.snapshot_format,
            "logFormat": v.log_format,
        })
    });
    if let (Value::Object(item), Value::Object(fields)) = (&mut item, fields) {
        item.extend(fields);
        item.insert("versions".into(), versions.unwrap_or(Value::Null));
    }
    item
}

/// How many entries the reporting replica's log holds.
fn log_entries(report: &ReplicaReport) -> u64 {
    match (report.first_log_index, report.last_log_index) {
        (Some(first), Some(last)) => (last + 1).saturating_sub(first),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use apiary_raft::replica::Role;

    use super::*;

    #[test]
    fn an_unreachable_member_is_shown_not_failed() {
        let member = Member {
            id: 2,
            peer_url: "https://127.0.0.1:7002".into(),
            role: Role::Voter,
            auto_promote: false,
            matched: None,
            lag: None,
        };
        let down = member_status(&member, Err("connection refused".into()), None);
        assert_eq!(down["reachable"], false);
        assert_eq!(down["role"], "voter");
        assert_eq!(down["error"], "connection refused");
        let report = ReplicaReport {
            id: 2,
            running: true,
            term: 3,
            first_log_index: Some(5),
            last_log_index: Some(14),
            ..ReplicaReport::default()
        };
        let up = member_status(&member, Ok(Some(report)), None);
        let older = member_status(&member, Ok(None), None);
        assert_eq!(older["reachable"], true);
        assert_eq!(older["reported"], false);
        assert_eq!(up["reachable"], true);
        assert_eq!(up["logEntries"], 10);
        assert_eq!(up["term"], 3);
    }
}
