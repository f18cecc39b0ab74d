//! `autoscaling/v1` ↔ `autoscaling/v2` HorizontalPodAutoscaler (stored as v2), as upstream's
//! `pkg/apis/autoscaling/v1` conversion: v1 has only `targetCPUUtilizationPercentage`, so the
//! first CPU `Resource` metric with a utilization target maps to it, and what v1 cannot
//! express (other metrics, current metrics, conditions, behavior) travels in the
//! `autoscaling.alpha.<domain>/*` annotations, metrics in their v1 (`v2beta1`-like) shape.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Conversion;
use super::ConversionError;
use crate::flavor::Flavor;

/// The CPU utilization a v1 HPA without metrics means (upstream's `DefaultCPUUtilization`).
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// Per metric source: (v1 field, v2 field) as JSON pointers inside the source, for specs.
const SPEC_FIELDS: &[(&str, &[(&str, &str)])] = &[
    (
        "object",
        &[
            ("/target", "/describedObject"),
            ("/metricName", "/metric/name"),
            ("/selector", "/metric/selector"),
            ("/targetValue", "/target/value"),
            ("/averageValue", "/target/averageValue"),
        ],
    ),
    (
        "pods",
        &[
            ("/metricName", "/metric/name"),
            ("/selector", "/metric/selector"),
            ("/targetAverageValue", "/target/averageValue"),
        ],
    ),
    (
        "resource",
        &[
            ("/name", "/name"),
            ("/targetAverageUtilization", "/target/averageUtilization"),
            ("/targetAverageValue", "/target/averageValue"),
        ],
    ),
    (
        "containerResource",
        &[
            ("/name", "/name"),
            ("/container", "/container"),
            ("/targetAverageUtilization", "/target/averageUtilization"),
            ("/targetAverageValue", "/target/averageValue"),
        ],
    ),
    (
        "external",
        &[
            ("/metricName", "/metric/name"),
            ("/metricSelector", "/metric/selector"),
            ("/targetValue", "/target/value"),
            ("/targetAverageValue", "/target/averageValue"),
        ],
    ),
];

/// The same for metric statuses.
const STATUS_FIELDS: &[(&str, &[(&str, &str)])] = &[
    (
        "object",
        &[
            ("/target", "/describedObject"),
            ("/metricName", "/metric/name"),
            ("/selector", "/metric/selector"),
            ("/currentValue", "/current/value"),
            ("/averageValue", "/current/averageValue"),
        ],
    ),
    (
        "pods",
        &[
            ("/metricName", "/metric/name"),
            ("/selector", "/metric/selector"),
            ("/currentAverageValue", "/current/averageValue"),
        ],
    ),
    (
        "resource",
        &[
            ("/name", "/name"),
            ("/currentAverageUtilization", "/current/averageUtilization"),
            ("/currentAverageValue", "/current/averageValue"),
        ],
    ),
    (
        "containerResource",
        &[
            ("/name", "/name"),
            ("/container", "/container"),
            ("/currentAverageUtilization", "/current/averageUtilization"),
            ("/currentAverageValue", "/current/averageValue"),
        ],
    ),
    (
        "external",
        &[
            ("/metricName", "/metric/name"),
            ("/metricSelector", "/metric/selector"),
            ("/currentValue", "/current/value"),
            ("/currentAverageValue", "/current/averageValue"),
        ],
    ),
];

/// Fields both versions' spec and status have, unchanged.
const SPEC_SAME: &[&str] = &["scaleTargetRef", "minReplicas", "maxReplicas"];
const STATUS_SAME: &[&str] = &[
    "observedGeneration",
    "lastScaleTime",
    "currentReplicas",
    "desiredReplicas",
];

/// The conversion of `autoscaling/v1` HorizontalPodAutoscalers.
#[derive(Debug, Clone, Copy)]
pub struct HpaV1;

/// The one [`HpaV1`] conversion the table refers to.
pub static HPA_V1: HpaV1 = HpaV1;

/// The round-trip annotations in `flavor`'s domain.
struct Annotations {
    metrics: String,
    current_metrics: String,
    conditions: String,
    behavior: String,
}

impl Annotations {
    fn of(flavor: Flavor) -> Self {
        let key = |name: &str| format!("autoscaling.alpha.{}/{name}", flavor.label_domain());
        Self {
            metrics: key("metrics"),
            current_metrics: key("current-metrics"),
            conditions: key("conditions"),
            behavior: key("behavior"),
        }
    }
}

/// Removes the value at `pointer` (`/a/b`) of `v`.
fn take(v: &mut Value, pointer: &str) -> Option<Value> {
    let (parent, last) = pointer.rsplit_once('/')?;
    let parent = if parent.is_empty() {
        v
    } else {
        v.pointer_mut(parent)?
    };
    parent.as_object_mut()?.remove(last)
}

/// Sets the value at `pointer` of `v`, creating the objects on the way.
fn put(v: &mut Value, pointer: &str, value: Value) {
    let mut at = v;
    let mut steps = pointer.split('/').skip(1).peekable();
    while let Some(step) = steps.next() {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(map) = at else { return };
        if steps.peek().is_none() {
            map.insert(step.to_owned(), value);
            return;
        }
        at = map.entry(step.to_owned()).or_insert_with(|| json!({}));
    }
}

/// A metric (spec or status) of one version moved to the other's shape: `forward` is
/// v1 → v2 (the first pointer of each pair is read, the second written).
fn convert_metric(mut metric: Value, fields: &[(&str, &[(&str, &str)])], forward: bool) -> Value {
    let mut out = Map::new();
    if let Some(t) = take(&mut metric, "/type") {
        out.insert("type".to_owned(), t);
    }
    let mut out = Value::Object(out);
    for (source, pairs) in fields {
        let Some(mut src) = take(&mut metric, &format!("/{source}")) else {
            continue;
        };
        let mut dst = json!({});
        for (v1, v2) in *pairs {
            let (from, to) = if forward { (v1, v2) } else { (v2, v1) };
            if let Some(v) = take(&mut src, from) {
                put(&mut dst, to, v);
            }
        }
        if forward && let Some(target) = dst.get_mut("target") {
            let kind = if target.get("averageUtilization").is_some() {
                "Utilization"
            } else if target.get("averageValue").is_some() {
                "AverageValue"
            } else {
                "Value"
            };
            put(target, "/type", kind.into());
        }
        put(&mut out, &format!("/{source}"), dst);
    }
    out
}

/// Whether `metric` (v2) is the CPU `Resource` metric v1 has a field for.
fn is_cpu(metric: &Value) -> bool {
    metric["type"] == "Resource" && metric.pointer("/resource/name") == Some(&json!("cpu"))
}

fn annotations_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    if obj.pointer("/metadata/annotations").is_none() {
        put(obj, "/metadata/annotations", json!({}));
    }
    obj.pointer_mut("/metadata/annotations")?.as_object_mut()
}

/// Removes the annotation `key` and parses its JSON.
fn take_annotation(obj: &mut Value, key: &str) -> Result<Option<Value>, ConversionError> {
    let Some(text) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
        .and_then(|a| a.remove(key))
    else {
        return Ok(None);
    };
    let text = text.as_str().unwrap_or_default();
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| ConversionError::Annotation {
            annotation: key.to_owned(),
            reason: e.to_string(),
        })
}

/// Drops `metadata.annotations` when the round-trip ones were all it held (Go omits an empty
/// map).
fn drop_empty_annotations(obj: &mut Value) {
    if obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        take(obj, "/metadata/annotations");
    }
}

fn copy_fields(from: &Value, to: &mut Map<String, Value>, fields: &[&str]) {
    for f in fields {
        if let Some(v) = from.get(*f) {
            to.insert((*f).to_owned(), v.clone());
        }
    }
}

impl Conversion for HpaV1 {
    /// v1 → v2: the CPU target becomes the last metric, after those from the annotation;
    /// with none at all, the implicit 80 % CPU target becomes explicit.
    fn to_storage(&self, mut obj: Value, flavor: Flavor) -> Result<Value, ConversionError> {
        let keys = Annotations::of(flavor);
        let v1_spec = take(&mut obj, "/spec").unwrap_or_else(|| json!({}));
        let v1_status = take(&mut obj, "/status");
        let mut spec = Map::new();
        copy_fields(&v1_spec, &mut spec, SPEC_SAME);
        let mut metrics: Vec<Value> = take_annotation(&mut obj, &keys.metrics)?
            .and_then(|m| m.as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .map(|m| convert_metric(m, SPEC_FIELDS, true))
            .collect();
        let cpu = v1_spec
            .get("targetCPUUtilizationPercentage")
            .cloned()
            .or_else(|| metrics.is_empty().then(|| DEFAULT_CPU_UTILIZATION.into()));
        if let Some(cpu) = cpu {
            metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": cpu}}}));
        }
        spec.insert("metrics".to_owned(), metrics.into());
        if let Some(behavior) = take_annotation(&mut obj, &keys.behavior)? {
            spec.insert("behavior".to_owned(), behavior);
        }
        let current = take_annotation(&mut obj, &keys.current_metrics)?;
        let conditions = take_annotation(&mut obj, &keys.conditions)?;
        drop_empty_annotations(&mut obj);
        put(&mut obj, "/spec", Value::Object(spec));
        let Some(v1_status) = v1_status else {
            return Ok(obj);
        };
        let mut status = Map::new();
        copy_fields(&v1_status, &mut status, STATUS_SAME);
        let current = match (current, v1_status.get("currentCPUUtilizationPercentage")) {
            (Some(list), _) => list
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|m| convert_metric(m, STATUS_FIELDS, true))
                .collect(),
            (None, Some(cpu)) => vec![json!({"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": cpu}}})],
            (None, None) => Vec::new(),
        };
        if !current.is_empty() {
            status.insert("currentMetrics".to_owned(), current.into());
        }
        if let Some(conditions) = conditions {
            status.insert("conditions".to_owned(), conditions);
        }
        put(&mut obj, "/status", Value::Object(status));
        Ok(obj)
    }

    /// v2 → v1: what v1 has no field for goes into the annotations, metrics in v1 shape.
    fn to_served(&self, mut obj: Value, flavor: Flavor) -> Result<Value, ConversionError> {
        let keys = Annotations::of(flavor);
        let v2_spec = take(&mut obj, "/spec").unwrap_or_else(|| json!({}));
        let v2_status = take(&mut obj, "/status");
        let mut annotations: Vec<(String, Value)> = Vec::new();
        let mut spec = Map::new();
        copy_fields(&v2_spec, &mut spec, SPEC_SAME);
        let metrics = v2_spec
            .get("metrics")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(cpu) = metrics.iter().find(|m| is_cpu(m))
            && let Some(u) = cpu.pointer("/resource/target/averageUtilization")
        {
            spec.insert("targetCPUUtilizationPercentage".to_owned(), u.clone());
        }
        let other: Vec<Value> = metrics
            .into_iter()
            .filter(|m| !(is_cpu(m) && m.pointer("/resource/target/averageUtilization").is_some()))
            .map(|m| convert_metric(m, SPEC_FIELDS, false))
            .collect();
        if !other.is_empty() {
            annotations.push((keys.metrics, other.into()));
        }
        if let Some(behavior) = v2_spec.get("behavior") {
            annotations.push((keys.behavior, behavior.clone()));
        }
        put(&mut obj, "/spec", Value::Object(spec));
        if let Some(v2_status) = v2_status {
            let mut status = Map::new();
            copy_fields(&v2_status, &mut status, STATUS_SAME);
            let current = v2_status
                .get("currentMetrics")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(u) = current
                .iter()
                .filter(|m| is_cpu(m))
                .filter_map(|m| m.pointer("/resource/current/averageUtilization"))
                .next_back()
            {
                status.insert("currentCPUUtilizationPercentage".to_owned(), u.clone());
            }
            if !current.is_empty() {
                let v1: Vec<Value> = current
                    .into_iter()
                    .map(|m| convert_metric(m, STATUS_FIELDS, false))
                    .collect();
                annotations.push((keys.current_metrics, v1.into()));
            }
            if let Some(c) = v2_status
                .get("conditions")
                .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
            {
                annotations.push((keys.conditions, c.clone()));
            }
            put(&mut obj, "/status", Value::Object(status));
        }
        if !annotations.is_empty()
            && let Some(map) = annotations_mut(&mut obj)
        {
            for (key, value) in annotations {
                map.insert(key, value.to_string().into());
            }
        }
        Ok(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> Value {
        json!({
            "metadata": {"name": "h", "namespace": "default", "annotations": {"a": "b"}},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {"type": "Pods", "pods": {"metric": {"name": "qps"},
                        "target": {"type": "AverageValue", "averageValue": "10"}}},
                    {"type": "External", "external": {"metric": {"name": "queue"},
                        "target": {"type": "Value", "value": "3"}}},
                    {"type": "Resource", "resource": {"name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 60}}},
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}},
            },
            "status": {
                "currentReplicas": 2,
                "desiredReplicas": 3,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": 55, "averageValue": "200m"}}}],
                "conditions": [{"type": "AbleToScale", "status": "True"}],
            },
        })
    }

    // R-VER-070: v2 → v1 → v2 loses nothing; the CPU target is v1's field, the rest rides
    // in the annotations in v1's shape, as upstream.
    #[test]
    fn v2_round_trips_through_v1() {
        let v1 = HPA_V1
            .to_served(v2(), Flavor::Kubernetes)
            .expect("converts");
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
        assert!(v1["spec"].get("metrics").is_none());
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 55);
        let ann = &v1["metadata"]["annotations"];
        assert_eq!(ann["a"], "b");
        let other: Value = serde_json::from_str(
            ann["autoscaling.alpha.kubernetes.io/metrics"]
                .as_str()
                .expect("text"),
        )
        .expect("json");
        assert_eq!(
            other,
            json!([
                {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}},
                {"type": "External", "external": {"metricName": "queue", "targetValue": "3"}},
            ])
        );
        let current: Value = serde_json::from_str(
            ann["autoscaling.alpha.kubernetes.io/current-metrics"]
                .as_str()
                .expect("text"),
        )
        .expect("json");
        assert_eq!(
            current,
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "currentAverageUtilization": 55, "currentAverageValue": "200m"}}])
        );
        assert!(
            ann.get("autoscaling.alpha.kubernetes.io/conditions")
                .is_some()
        );
        assert!(
            ann.get("autoscaling.alpha.kubernetes.io/behavior")
                .is_some()
        );

        let back = HPA_V1.to_storage(v1, Flavor::Kubernetes).expect("converts");
        assert_eq!(back, v2());
    }

    // The platform flavor spells the annotations in its own domain (DESIGN.md §5).
    #[test]
    fn annotations_follow_the_flavor() {
        let v1 = HPA_V1.to_served(v2(), Flavor::Platform).expect("converts");
        assert!(
            v1["metadata"]["annotations"]
                .get("autoscaling.alpha.platform.io/metrics")
                .is_some()
        );
    }

    // A v1 HPA without a CPU target means upstream's implicit 80 %; without annotations
    // nothing else appears.
    #[test]
    fn v1_without_target_gets_the_default_cpu_metric() {
        let v1 = json!({"metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "maxReplicas": 3},
            "status": {"currentReplicas": 0, "desiredReplicas": 0}});
        let v2 = HPA_V1
            .to_storage(v1.clone(), Flavor::Kubernetes)
            .expect("converts");
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
        assert!(v2["metadata"].get("annotations").is_none());
        let again = HPA_V1.to_served(v2, Flavor::Kubernetes).expect("converts");
        assert_eq!(again["spec"]["targetCPUUtilizationPercentage"], 80);
        assert_eq!(again["status"], v1["status"]);
    }

    #[test]
    fn a_broken_annotation_is_an_error_naming_it() {
        let v1 = json!({"metadata": {"name": "h", "annotations": {
            "autoscaling.alpha.kubernetes.io/metrics": "not json"}},
            "spec": {"maxReplicas": 3}});
        let err = HPA_V1
            .to_storage(v1, Flavor::Kubernetes)
            .expect_err("refused");
        assert!(
            err.to_string()
                .contains("autoscaling.alpha.kubernetes.io/metrics")
        );
    }
}
