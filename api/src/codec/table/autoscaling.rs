//! Scaling: horizontal pod autoscalers (`autoscaling/v2` and `autoscaling/v1` objects) and
//! pod disruption budgets.

use k8s_openapi::api::autoscaling::v2 as autoscaling;
use serde_json::Value;

use super::columns::AGE;
use super::columns::Column;
use super::columns::Doc;
use super::columns::NAME;
use super::columns::schema_of;
use super::format;
use super::format::int;
use super::format::text;
use super::printer::Group;
use super::printer::PrintContext;
use super::printer::Printer;
use super::printer::Row;

/// The printers of this family.
pub(super) const PRINTERS: &[Printer] = &[
    Printer {
        group: Group::Plain("autoscaling"),
        resources: &["horizontalpodautoscalers"],
        columns: &[
            NAME,
            Column::string(
                "Reference",
                Doc::Field(
                    schema_of::<autoscaling::HorizontalPodAutoscalerSpec>,
                    "scaleTargetRef",
                ),
            ),
            Column::string(
                "Targets",
                Doc::Field(
                    schema_of::<autoscaling::HorizontalPodAutoscalerSpec>,
                    "metrics",
                ),
            ),
            Column::string(
                "MinPods",
                Doc::Field(
                    schema_of::<autoscaling::HorizontalPodAutoscalerSpec>,
                    "minReplicas",
                ),
            ),
            Column::string(
                "MaxPods",
                Doc::Field(
                    schema_of::<autoscaling::HorizontalPodAutoscalerSpec>,
                    "maxReplicas",
                ),
            ),
            Column::string(
                "Replicas",
                Doc::Field(
                    schema_of::<autoscaling::HorizontalPodAutoscalerStatus>,
                    "currentReplicas",
                ),
            ),
            AGE,
        ],
        row: hpa_row,
        order: None,
    },
    Printer {
        group: Group::Plain("policy"),
        resources: &["poddisruptionbudgets"],
        columns: &[
            NAME,
            Column::string(
                "Min Available",
                Doc::Text("The minimum number of pods that must be available."),
            ),
            Column::string(
                "Max Unavailable",
                Doc::Text("The maximum number of pods that may be unavailable."),
            ),
            Column::integer(
                "Allowed Disruptions",
                Doc::Text("Calculated number of pods that may be disrupted at this time."),
            ),
            AGE,
        ],
        row: pdb_row,
        order: None,
    },
];

fn name(v: &Value) -> Value {
    text(v, "/metadata/name").into()
}

/// A quantity's text as stored (`500m`, `1Gi`).
fn quantity(v: &Value, pointer: &str) -> String {
    match v.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// One metric of an `autoscaling/v2` HPA as `current/target`.
fn hpa_metric(spec: &Value, status: Option<&Value>) -> String {
    let unknown = || "<unknown>".to_owned();
    let current = |pointer: &str| {
        status
            .and_then(|s| s.pointer(pointer))
            .filter(|v| !v.is_null())
            .map_or_else(unknown, |_| {
                quantity(status.unwrap_or(&Value::Null), pointer)
            })
    };
    match text(spec, "/type") {
        kind @ ("External" | "Object") => {
            let field = if kind == "External" {
                "external"
            } else {
                "object"
            };
            if spec
                .pointer(&format!("/{field}/target/averageValue"))
                .is_some()
            {
                format!(
                    "{}/{} (avg)",
                    current(&format!("/{field}/current/averageValue")),
                    quantity(spec, &format!("/{field}/target/averageValue"))
                )
            } else {
                format!(
                    "{}/{}",
                    current(&format!("/{field}/current/value")),
                    quantity(spec, &format!("/{field}/target/value"))
                )
            }
        }
        "Pods" => format!(
            "{}/{}",
            current("/pods/current/averageValue"),
            quantity(spec, "/pods/target/averageValue")
        ),
        kind @ ("Resource" | "ContainerResource") => {
            let field = if kind == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let resource = text(spec, &format!("/{field}/name"));
            if spec
                .pointer(&format!("/{field}/target/averageValue"))
                .is_some()
            {
                format!(
                    "{resource}: {}/{}",
                    current(&format!("/{field}/current/averageValue")),
                    quantity(spec, &format!("/{field}/target/averageValue"))
                )
            } else {
                let current = status
                    .and_then(|s| s.pointer(&format!("/{field}/current/averageUtilization")))
                    .and_then(Value::as_i64)
                    .map_or_else(unknown, |u| format!("{u}%"));
                let target = spec
                    .pointer(&format!("/{field}/target/averageUtilization"))
                    .and_then(Value::as_i64)
                    .map_or_else(|| "<auto>".to_owned(), |u| format!("{u}%"));
                format!("{resource}: {current}/{target}")
            }
        }
        _ => "<unknown type>".to_owned(),
    }
}

/// The TARGETS cell: at most two metrics, then `+ N more...`.
fn hpa_targets(hpa: &Value) -> String {
    if hpa
        .pointer("/spec/targetCPUUtilizationPercentage")
        .is_some()
        || text(hpa, "/apiVersion") == "autoscaling/v1"
    {
        let Some(target) = hpa
            .pointer("/spec/targetCPUUtilizationPercentage")
            .and_then(Value::as_i64)
        else {
            return "<none>".to_owned();
        };
        let current = hpa
            .pointer("/status/currentCPUUtilizationPercentage")
            .and_then(Value::as_i64)
            .map_or_else(|| "<unknown>".to_owned(), |c| format!("{c}%"));
        return format!("cpu: {current}/{target}%");
    }
    let specs = format::items(hpa, "/spec/metrics");
    if specs.is_empty() {
        return "<none>".to_owned();
    }
    let statuses = format::items(hpa, "/status/currentMetrics");
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| hpa_metric(spec, statuses.get(i)))
        .collect();
    let shown = list.iter().take(2).cloned().collect::<Vec<_>>().join(", ");
    if list.len() > 2 {
        format!("{shown} + {} more...", list.len() - 2)
    } else {
        shown
    }
}

fn hpa_row(hpa: &Value, ctx: &PrintContext) -> Row {
    let reference = format!(
        "{}/{}",
        text(hpa, "/spec/scaleTargetRef/kind"),
        text(hpa, "/spec/scaleTargetRef/name")
    );
    let min = hpa
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or_else(|| "<unset>".to_owned(), |m| m.to_string());
    vec![
        name(hpa),
        reference.into(),
        hpa_targets(hpa).into(),
        min.into(),
        int(hpa, "/spec/maxReplicas").into(),
        int(hpa, "/status/currentReplicas").into(),
        format::age(hpa, ctx.now).into(),
    ]
    .into()
}

/// An int-or-string field's text, `N/A` when unset.
fn int_or_string(v: &Value, pointer: &str) -> String {
    match v.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".to_owned(),
    }
}

fn pdb_row(pdb: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(pdb),
        int_or_string(pdb, "/spec/minAvailable").into(),
        int_or_string(pdb, "/spec/maxUnavailable").into(),
        int(pdb, "/status/disruptionsAllowed").into(),
        format::age(pdb, ctx.now).into(),
    ]
    .into()
}

#[cfg(test)]
#[path = "autoscaling_tests.rs"]
mod tests;
