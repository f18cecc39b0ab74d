//! JSON Patch bombs on a ConfigMap: `copy` operations that double the object (C2), more than
//! 10,000 operations (C1), and copies that double the depth of a nested chain (C3, also as a dry
//! run). Each is refused with nothing stored, and no replica grows or crashes.

use apiary_tests::Flavor;
use apiary_tests::objects;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use crate::Hostile;
use crate::JSON_PATCH;
use crate::assert_error;

/// How many times the copy bomb copies the annotations into themselves (the issue's
/// reproducer: each copy doubles them, so 30 copies of 1 KiB would be 1 TiB).
const COPY_DOUBLINGS: usize = 30;

/// The size of the one annotation the copy bomb starts from.
const COPIED_BYTES: usize = 1000;

/// One operation more than a JSON Patch may have (Kubernetes' `maxJSONPatchOperations`).
const TOO_MANY_OPERATIONS: usize = 10_001;

/// How deep the chain the nest bomb adds is (the patch body itself nests within the limit).
const CHAIN_DEPTH: usize = 100;

/// How many times the nest bomb copies the chain into its own leaf, doubling its depth each
/// time: 100 * 2^7 = 12,800 levels, the reproducer.
const DEPTH_DOUBLINGS: u32 = 7;

/// The copy bomb: a 1 KiB annotation map, then [`COPY_DOUBLINGS`] copies of the
/// annotations into themselves.
fn copy_bomb() -> Value {
    let mut ops = vec![json!({
        "op": "add",
        "path": "/metadata/annotations",
        "value": { "a": "x".repeat(COPIED_BYTES) },
    })];
    ops.extend((0..COPY_DOUBLINGS).map(|i| {
        json!({
            "op": "copy",
            "from": "/metadata/annotations",
            "path": format!("/metadata/annotations/c{i}"),
        })
    }));
    Value::Array(ops)
}

/// An `add` that would change the object, then `test` operations up to
/// [`TOO_MANY_OPERATIONS`] in all, each of which holds.
fn too_many_operations() -> Value {
    let mut ops = vec![json!({"op": "add", "path": "/data/added", "value": "1"})];
    ops.extend(
        (1..TOO_MANY_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "/data/added", "value": "1"})),
    );
    Value::Array(ops)
}

/// The nest bomb: a chain [`CHAIN_DEPTH`] objects deep under key `a` added at `/zz`,
/// then [`DEPTH_DOUBLINGS`] copies of `/zz` into the chain's innermost object, each doubling
/// the chain.
fn nest_bomb() -> Value {
    let chain = (0..CHAIN_DEPTH).fold(json!({}), |inner, _| json!({ "a": inner }));
    let mut ops = vec![json!({"op": "add", "path": "/zz", "value": chain})];
    let mut depth = CHAIN_DEPTH;
    for _ in 0..DEPTH_DOUBLINGS {
        ops.push(json!({
            "op": "copy",
            "from": "/zz",
            "path": format!("/zz{}", "/a".repeat(depth)),
        }));
        depth *= 2;
    }
    Value::Array(ops)
}

#[tokio::test]
async fn json_patch_bombs_are_refused_and_nothing_is_stored() {
    let hostile = Hostile::start(Flavor::Platform).await;
    let path = objects::configmap_path("target");
    let before = hostile
        .create(
            &objects::configmaps_path(),
            &objects::configmap("target", &[("v", "1")]),
        )
        .await;

    // C2: the copies stop at the copy budget; the answer does not echo the object.
    let reply = hostile
        .send(1, Method::PATCH, &path, JSON_PATCH, copy_bomb().to_string())
        .await;
    assert_error(&reply, StatusCode::UNPROCESSABLE_ENTITY, "Invalid", "copy");
    hostile.assert_unchanged(&path, &before).await;

    // C1: counted before any operation applies.
    let reply = hostile
        .send(
            2,
            Method::PATCH,
            &path,
            JSON_PATCH,
            too_many_operations().to_string(),
        )
        .await;
    assert_error(
        &reply,
        StatusCode::PAYLOAD_TOO_LARGE,
        "RequestEntityTooLarge",
        &format!(
            "The allowed maximum operations in a JSON patch is 10000, got {TOO_MANY_OPERATIONS}"
        ),
    );
    let status: Value = reply.json(&path).expect("a Status");
    assert_eq!(
        status["message"],
        format!(
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got {TOO_MANY_OPERATIONS}"
        )
    );
    hostile.assert_unchanged(&path, &before).await;

    // C3: the depth is checked while the copies build the value, on a write and a dry run.
    for (replica, query) in [(3, ""), (1, "?dryRun=All")] {
        let reply = hostile
            .send(
                replica,
                Method::PATCH,
                &format!("{path}{query}"),
                JSON_PATCH,
                nest_bomb().to_string(),
            )
            .await;
        assert_error(
            &reply,
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            "nesting depth",
        );
        hostile.assert_unchanged(&path, &before).await;
    }

    hostile.assert_unharmed().await;
}
