use chrono::TimeZone;
use chrono::Utc;
use serde_json::json;

use super::*;
use crate::flavor::Flavor;

fn ctx(flavor: Flavor) -> PrintContext {
    PrintContext {
        now: Utc.with_ymd_and_hms(2026, 1, 1, 1, 0, 0).unwrap(),
        flavor,
    }
}

#[test]
fn events_of_both_groups_print_alike() {
    let core = json!({
        "metadata": {"name": "web.17"},
        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{app}"},
        "reason": "Pulled", "type": "Normal", "message": " pulled \n",
        "source": {"component": "kubelet", "host": "n1"},
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:58:00Z", "count": 4
    });
    let want = vec![
        json!("2m"),
        json!("Normal"),
        json!("Pulled"),
        json!("pod/web"),
        json!("spec.containers{app}"),
        json!("kubelet, n1"),
        json!("pulled"),
        json!("60m"),
        json!(4),
        json!("web.17"),
    ];
    assert_eq!(core_event_row(&core, &ctx(Flavor::Kubernetes)).cells, want);
    let events = json!({
        "metadata": {"name": "web.17"},
        "regarding": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{app}"},
        "reason": "Pulled", "type": "Normal", "note": "pulled",
        "deprecatedSource": {"component": "kubelet", "host": "n1"},
        "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z", "deprecatedLastTimestamp": "2026-01-01T00:58:00Z", "deprecatedCount": 4
    });
    assert_eq!(
        events_event_row(&events, &ctx(Flavor::Kubernetes)).cells,
        want
    );
    let series = json!({"metadata": {"name": "e"}, "eventTime": "2026-01-01T00:30:00.000000Z", "reportingController": "ctl",
        "series": {"count": 9, "lastObservedTime": "2026-01-01T00:59:00.000000Z"}, "involvedObject": {"kind": "Node"}});
    let cells = core_event_row(&series, &ctx(Flavor::Kubernetes)).cells;
    assert_eq!(
        [&cells[0], &cells[3], &cells[5], &cells[7], &cells[8]],
        [
            &json!("60s"),
            &json!("node"),
            &json!("ctl"),
            &json!("30m"),
            &json!(9)
        ]
    );
}
