//! A real CRD conversion webhook for the conversion tests: a [`ReviewWebhook`] converting
//! `Widget`s between `v1` (`spec.host`, `spec.port`) and `v2` (`spec.address`, `host:port`,
//! and `spec.weight`, which `v1` cannot express and keeps in the annotation
//! [`WEIGHT_ANNOTATION`]), so objects round-trip between the versions without loss.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use serde_json::json;

use crate::error::Result;
use crate::review_webhook::ReviewWebhook;

/// Where a `v1` object keeps its `v2` weight.
pub const WEIGHT_ANNOTATION: &str = "example.com/weight";

/// Starts the webhook on a free loopback port at `/convert`, its certificates in `dir`,
/// valid also for `names`.
pub async fn start(dir: &Path, names: &[&str]) -> Result<ReviewWebhook> {
    ReviewWebhook::start_naming(dir, "convert", names, Arc::new(answer)).await
}

/// The ConversionReview answering `review`.
fn answer(review: &Value) -> Bytes {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let converted: Vec<Value> = (request["objects"].as_array().into_iter().flatten())
        .map(|o| convert(o, desired))
        .collect();
    let reply = json!({
        "apiVersion": review["apiVersion"],
        "kind": "ConversionReview",
        "response": {
            "uid": request["uid"],
            "result": {"status": "Success"},
            "convertedObjects": converted,
        },
    });
    Bytes::from(reply.to_string())
}

/// `obj` in `desired` (`<group>/v1` or `<group>/v2`).
fn convert(obj: &Value, desired: &str) -> Value {
    let mut out = obj.clone();
    out["apiVersion"] = desired.into();
    let spec = &obj["spec"];
    match (desired.ends_with("/v2"), spec.get("address").is_some()) {
        (true, false) => {
            let address = format!(
                "{}:{}",
                spec["host"].as_str().unwrap_or_default(),
                spec["port"]
            );
            out["spec"] = json!({"address": address});
            let weight = obj["metadata"]["annotations"][WEIGHT_ANNOTATION].as_str();
            if let Some(weight) = weight.and_then(|w| w.parse::<i64>().ok()) {
                out["spec"]["weight"] = weight.into();
            }
            if let Some(annotations) = out["metadata"]["annotations"].as_object_mut() {
                annotations.remove(WEIGHT_ANNOTATION);
            }
        }
        (false, true) => {
            let address = spec["address"].as_str().unwrap_or_default();
            let (host, port) = address.rsplit_once(':').unwrap_or((address, "0"));
            out["spec"] = json!({"host": host, "port": port.parse::<i64>().unwrap_or(0)});
            if let Some(weight) = spec.get("weight") {
                out["metadata"]["annotations"][WEIGHT_ANNOTATION] = weight.to_string().into();
            }
        }
        _ => {}
    }
    out
}
