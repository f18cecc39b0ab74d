use chrono::TimeZone;
use chrono::Utc;
use serde_json::json;

use super::*;
use crate::flavor::Flavor;

fn ctx() -> PrintContext {
    PrintContext {
        now: Utc.with_ymd_and_hms(2026, 1, 3, 12, 0, 0).unwrap(),
        flavor: Flavor::Kubernetes,
    }
}

#[test]
fn autoscalers_print_their_targets() {
    let v2 = json!({
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}}
        ]},
        "status": {"currentReplicas": 2, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}
        ]}
    });
    assert_eq!(
        hpa_row(&v2, &ctx()).cells[1..6],
        [
            json!("Deployment/web"),
            json!("cpu: 42%/80%, <unknown>/10 + 1 more..."),
            json!("1"),
            json!(5),
            json!(2)
        ]
    );
    let v1 = json!({"apiVersion": "autoscaling/v1", "metadata": {"name": "x"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"}, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}});
    assert_eq!(
        hpa_row(&v1, &ctx()).cells[2..4],
        [json!("cpu: <unknown>/50%"), json!("<unset>")]
    );
}

#[test]
fn disruption_budgets_print_int_or_percent() {
    let pdb = json!({"metadata": {"name": "b"}, "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}});
    assert_eq!(
        pdb_row(&pdb, &ctx()).cells[1..4],
        [json!("50%"), json!("N/A"), json!(1)]
    );
}
