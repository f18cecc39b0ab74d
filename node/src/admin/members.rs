//! The membership area of the operating API (`/apiary/v1/members...`): listing the members as
//! the leader sees them, adding a learner, promoting it, handing leadership to a member and
//! removing one. Every change runs on the leader (the replica asked forwards it); a refusal
//! names its reason, no leader is a 503 with `Retry-After`, an unknown outcome a 504.
//!
//! | Method | Path                                  | Does                                  |
//! |--------|---------------------------------------|---------------------------------------|
//! | GET    | `members`                             | the members (`MemberList`)            |
//! | POST   | `members`                             | adds a learner (`{"peerURL", "id"?, "autoPromote"?}`) |
//! | POST   | `members/<id>/promote`                | makes learner `<id>` a voter          |
//! | POST   | `members/<id>/transfer-leadership`    | hands leadership to voter `<id>`      |
//! | DELETE | `members/<id>`                        | removes member `<id>`                 |

use apiary_api::admin::AdminRequest;
use apiary_api::error::ApiError;
use apiary_api::group::GroupResource;
use apiary_raft::replica::Member;
use apiary_raft::replica::MemberChangeError;
use apiary_raft::replica::Refusal;
use apiary_raft::replica::Role;
use apiary_raft::typ::NodeId;
use axum::Json;
use axum::response::IntoResponse;
use axum::response::Response;
use http::Method;
use http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use serde_json::json;

use super::NodeAdmin;

/// The group of the operating API's answers (`apiVersion`).
pub const API_VERSION: &str = "apiary/v1";

/// The body of `POST members`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AddMember {
    /// The new member's node id (default: the highest member id + 1).
    id: Option<NodeId>,
    /// The new member's peer URL.
    #[serde(rename = "peerURL")]
    peer_url: String,
    /// Promote it once caught up (default: stay a learner until promoted).
    #[serde(default)]
    auto_promote: bool,
}

/// Serves `members...`.
pub async fn serve(admin: &NodeAdmin, request: AdminRequest<'_>) -> Result<Response, ApiError> {
    let segments: Vec<&str> = request.path.split('/').collect();
    match (&request.method, segments.as_slice()) {
        (&Method::GET, ["members"]) => list(admin).await,
        (&Method::POST, ["members"]) => add(admin, &request.body).await,
        (&Method::POST, ["members", id, "promote"]) => {
            let id = parse_id(id)?;
            let index = admin.replica.promote(id).await.map_err(|e| change(e, id))?;
            Ok(changed(id, index, "promoted"))
        }
        (&Method::POST, ["members", id, "transfer-leadership"]) => {
            let id = parse_id(id)?;
            let leader = admin
                .replica
                .transfer_leadership_to(Some(id))
                .await
                .map_err(|e| change(e, id))?;
            Ok(Json(json!({
                "kind": "LeadershipTransfer",
                "apiVersion": API_VERSION,
                "leader": leader,
            }))
            .into_response())
        }
        (&Method::DELETE, ["members", id]) => {
            let id = parse_id(id)?;
            ensure_member(admin, id).await?;
            let index = admin
                .replica
                .remove_member(id)
                .await
                .map_err(|e| change(e.into(), id))?;
            Ok(changed(id, index, "removed"))
        }
        (_, ["members"] | ["members", _] | ["members", _, "promote" | "transfer-leadership"]) => {
            Err(ApiError::MethodNotAllowed {
                resource: members_resource(),
                name: String::new(),
            })
        }
        _ => Err(ApiError::UnknownResource),
    }
}

/// `GET members`: the members as the leader sees them, and the cluster's effective version.
async fn list(admin: &NodeAdmin) -> Result<Response, ApiError> {
    let members = admin
        .replica
        .members_from_leader()
        .await
        .map_err(|e| change(e, 0))?;
    let mut answer = member_list(&members);
    let versions = crate::cluster_version::read(&admin.replica).ok();
    answer["effectiveVersion"] = json!(versions.map(|v| v.effective));
    Ok(Json(answer).into_response())
}

/// `Ok` when `id` is a member as the leader sees it (removal itself is idempotent, so an id
/// that never was a member, a typo, would otherwise be "removed" silently).
async fn ensure_member(admin: &NodeAdmin, id: NodeId) -> Result<(), ApiError> {
    let members = admin
        .replica
        .members_from_leader()
        .await
        .map_err(|e| change(e, id))?;
    if members.iter().any(|m| m.id == id) {
        return Ok(());
    }
    Err(change(
        MemberChangeError::Refused(Refusal::UnknownMember { node_id: id }),
        id,
    ))
}

/// `POST members`: adds a learner.
async fn add(admin: &NodeAdmin, body: &[u8]) -> Result<Response, ApiError> {
    let wanted: AddMember = serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("the body is not a member to add: {e}")))?;
    let peer_url = wanted.peer_url.trim_end_matches('/').to_owned();
    if !is_peer_url(&peer_url) {
        return Err(ApiError::BadRequest(format!(
            "peerURL {peer_url:?} is not http(s)://host:port"
        )));
    }
    let id = match wanted.id {
        Some(0) => return Err(ApiError::BadRequest("a member id is at least 1".into())),
        Some(id) => id,
        None => {
            let members = admin
                .replica
                .members_from_leader()
                .await
                .map_err(|e| change(e, 0))?;
            members.iter().map(|m| m.id).max().unwrap_or(0) + 1
        }
    };
    let index = admin
        .replica
        .add_learner(id, peer_url.clone(), wanted.auto_promote)
        .await
        .map_err(|e| change(e, id))?;
    let answer = json!({
        "kind": "Member",
        "apiVersion": API_VERSION,
        "id": id,
        "peerURL": peer_url,
        "role": "learner",
        "autoPromote": wanted.auto_promote,
        "logIndex": index,
    });
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// The `MemberList` answer.
pub fn member_list(members: &[Member]) -> Value {
    let items: Vec<Value> = members.iter().map(member_json).collect();
    json!({"kind": "MemberList", "apiVersion": API_VERSION, "members": items})
}

/// One member as JSON.
pub fn member_json(member: &Member) -> Value {
    json!({
        "id": member.id,
        "peerURL": member.peer_url,
        "role": role_name(member.role),
        "autoPromote": member.auto_promote,
        "matched": member.matched,
        "lag": member.lag,
    })
}

/// The lowercase name of `role`.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Leader => "leader",
        Role::Voter => "voter",
        Role::Learner => "learner",
    }
}

/// The answer to a change that took effect at log `index`.
fn changed(id: NodeId, index: u64, what: &str) -> Response {
    Json(json!({
        "kind": "MemberChange",
        "apiVersion": API_VERSION,
        "id": id,
        "change": what,
        "logIndex": index,
    }))
    .into_response()
}

/// A member id from the path: a positive integer.
fn parse_id(text: &str) -> Result<NodeId, ApiError> {
    match text.parse::<NodeId>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(ApiError::BadRequest(format!(
            "{:?} is not a member id (a positive integer)",
            text.chars().take(32).collect::<String>()
        ))),
    }
}

/// `http(s)://authority` with a port and no path or query (what `--initial-cluster` takes).
fn is_peer_url(url: &str) -> bool {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return false;
    };
    matches!(uri.scheme_str(), Some("https" | "http"))
        && matches!(uri.path(), "" | "/")
        && uri.port_u16().is_some()
        && uri.query().is_none()
}

fn members_resource() -> GroupResource {
    GroupResource::new("apiary", "members")
}

/// The API error of a failed membership operation on member `id` (0: none named).
pub fn change(e: MemberChangeError, id: NodeId) -> ApiError {
    match e {
        MemberChangeError::NotLeader { .. } | MemberChangeError::Unavailable { .. } => {
            ApiError::ServiceUnavailable(e.to_string())
        }
        MemberChangeError::OutcomeUnknown { reason } => ApiError::Timeout { reason },
        MemberChangeError::Refused(Refusal::UnknownMember { node_id }) => ApiError::NotFound {
            resource: members_resource(),
            name: node_id.to_string(),
        },
        MemberChangeError::Refused(refusal) => ApiError::Conflict {
            resource: members_resource(),
            name: id.to_string(),
            reason: refusal.to_string(),
        },
        MemberChangeError::Fatal { reason } => ApiError::Internal(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_urls_are_checked() {
        assert_eq!(parse_id("4"), Ok(4));
        for bad in ["0", "-1", "x", "", "99999999999999999999999"] {
            assert!(
                matches!(parse_id(bad), Err(ApiError::BadRequest(_))),
                "{bad}"
            );
        }
        assert!(is_peer_url("https://127.0.0.1:7004"));
        assert!(!is_peer_url("https://127.0.0.1"));
        assert!(!is_peer_url("ftp://h:1"));
        assert!(!is_peer_url("https://h:1/raft"));
    }

    #[test]
    fn refusals_keep_their_kind() {
        let unknown = change(
            MemberChangeError::Refused(Refusal::UnknownMember { node_id: 9 }),
            9,
        );
        assert!(matches!(unknown, ApiError::NotFound { .. }), "{unknown:?}");
        let behind = change(
            MemberChangeError::Refused(Refusal::NotCaughtUp {
                node_id: 4,
                lag: Some(5000),
            }),
            4,
        );
        assert!(behind.to_string().contains("behind by 5000"), "{behind}");
        let none = change(
            MemberChangeError::Unavailable {
                reason: "election".into(),
            },
            4,
        );
        assert!(matches!(none, ApiError::ServiceUnavailable(_)));
        let unknown_outcome = change(
            MemberChangeError::OutcomeUnknown {
                reason: "deadline".into(),
            },
            4,
        );
        assert!(matches!(unknown_outcome, ApiError::Timeout { .. }));
    }
}
