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

const CREATED: &str = "2026-01-01T12:00:00Z";

#[test]
fn deployments_show_ready_of_desired_and_the_wide_template() {
    let d = json!({
        "metadata": {"name": "web", "creationTimestamp": CREATED},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
    });
    assert_eq!(
        deployment_row(&d, &ctx()).cells,
        vec![
            json!("web"),
            json!("2/3"),
            json!(3),
            json!(2),
            json!("2d"),
            json!("nginx"),
            json!("nginx:1.27"),
            json!("app=web")
        ]
    );
}

#[test]
fn replica_sets_controllers_stateful_and_daemon_sets() {
    let rs = json!({
        "metadata": {"name": "web-1", "creationTimestamp": CREATED},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
        "status": {"replicas": 2, "readyReplicas": 1}
    });
    assert_eq!(
        replica_set_row(&rs, &ctx()).cells[1..5],
        [json!(2), json!(2), json!(1), json!("2d")]
    );
    let rc = json!({"metadata": {"name": "rc"}, "spec": {"replicas": 1, "selector": {"a": "b"}}});
    assert_eq!(
        replication_controller_row(&rc, &ctx()).cells,
        vec![
            json!("rc"),
            json!(1),
            json!(0),
            json!(0),
            json!("<unknown>"),
            json!(""),
            json!(""),
            json!("a=b")
        ]
    );
    let ss = json!({"metadata": {"name": "db"}, "spec": {"replicas": 3}, "status": {"readyReplicas": 3}});
    assert_eq!(stateful_set_row(&ss, &ctx()).cells[1], json!("3/3"));
    let ds = json!({
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"k": "v"}}, "template": {"spec": {"nodeSelector": {"os": "linux"}, "containers": []}}},
        "status": {"desiredNumberScheduled": 4, "currentNumberScheduled": 4, "numberReady": 3, "updatedNumberScheduled": 4, "numberAvailable": 3}
    });
    assert_eq!(
        daemon_set_row(&ds, &ctx()).cells[1..7],
        [
            json!(4),
            json!(4),
            json!(3),
            json!(4),
            json!(3),
            json!("os=linux")
        ]
    );
}

#[test]
fn jobs_show_status_completions_and_duration() {
    let job = json!({
        "metadata": {"name": "pi", "creationTimestamp": CREATED},
        "spec": {"completions": 3, "template": {"spec": {"containers": []}}},
        "status": {"succeeded": 3, "startTime": "2026-01-01T12:00:00Z", "completionTime": "2026-01-01T12:01:30Z",
                   "conditions": [{"type": "Complete", "status": "True"}]}
    });
    assert_eq!(
        job_row(&job, &ctx()).cells[1..4],
        [json!("Complete"), json!("3/3"), json!("90s")]
    );
    let parallel = json!({"metadata": {"name": "p"}, "spec": {"parallelism": 2}, "status": {"startTime": "2026-01-03T11:00:00Z"}});
    assert_eq!(
        job_row(&parallel, &ctx()).cells[1..4],
        [json!("Running"), json!("0/1 of 2"), json!("60m")]
    );
    let suspended = json!({"metadata": {"name": "s"}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
    assert_eq!(
        job_row(&suspended, &ctx()).cells[1..4],
        [json!("Suspended"), json!("0/1"), json!("")]
    );
}

#[test]
fn cron_jobs_show_schedule_zone_suspension_and_last_run() {
    let cj = json!({
        "metadata": {"name": "nightly", "creationTimestamp": CREATED},
        "spec": {"schedule": "0 2 * * *", "suspend": false, "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}},
        "status": {"active": [{"name": "nightly-1"}], "lastScheduleTime": "2026-01-03T02:00:00Z"}
    });
    assert_eq!(
        cron_job_row(&cj, &ctx()).cells[..7],
        [
            json!("nightly"),
            json!("0 2 * * *"),
            json!("<none>"),
            json!("False"),
            json!(1),
            json!("10h"),
            json!("2d")
        ]
    );
}

#[test]
fn controller_revisions_name_their_controller() {
    let cr = json!({"metadata": {"name": "db-5d8f", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": true}
    ]}, "revision": 4});
    assert_eq!(
        controller_revision_row(&cr, &ctx()).cells[1..3],
        [json!("statefulset.apps/db"), json!(4)]
    );
}
