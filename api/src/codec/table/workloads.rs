//! Workloads: deployments, replica sets, replication controllers, stateful sets, daemon
//! sets, jobs, cron jobs and controller revisions.

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use super::columns::AGE;
use super::columns::CONTAINERS;
use super::columns::Column;
use super::columns::Doc;
use super::columns::IMAGES;
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
        group: Group::Plain("apps"),
        resources: &["deployments"],
        columns: &[
            NAME,
            Column::string("Ready", Doc::Text("Number of the pod with ready state")),
            Column::string(
                "Up-to-date",
                Doc::Field(schema_of::<apps::DeploymentStatus>, "updatedReplicas"),
            ),
            Column::string(
                "Available",
                Doc::Field(schema_of::<apps::DeploymentStatus>, "availableReplicas"),
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            Column::string(
                "Selector",
                Doc::Field(schema_of::<apps::DeploymentSpec>, "selector"),
            )
            .wide(),
        ],
        row: deployment_row,
        order: None,
    },
    Printer {
        group: Group::Plain("apps"),
        resources: &["replicasets"],
        columns: &[
            NAME,
            Column::integer(
                "Desired",
                Doc::Field(schema_of::<apps::ReplicaSetSpec>, "replicas"),
            ),
            Column::integer(
                "Current",
                Doc::Field(schema_of::<apps::ReplicaSetStatus>, "replicas"),
            ),
            Column::integer(
                "Ready",
                Doc::Field(schema_of::<apps::ReplicaSetStatus>, "readyReplicas"),
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            Column::string(
                "Selector",
                Doc::Field(schema_of::<apps::ReplicaSetSpec>, "selector"),
            )
            .wide(),
        ],
        row: replica_set_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["replicationcontrollers"],
        columns: &[
            NAME,
            Column::integer(
                "Desired",
                Doc::Field(schema_of::<core::ReplicationControllerSpec>, "replicas"),
            ),
            Column::integer(
                "Current",
                Doc::Field(schema_of::<core::ReplicationControllerStatus>, "replicas"),
            ),
            Column::integer(
                "Ready",
                Doc::Field(
                    schema_of::<core::ReplicationControllerStatus>,
                    "readyReplicas",
                ),
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            Column::string(
                "Selector",
                Doc::Field(schema_of::<core::ReplicationControllerSpec>, "selector"),
            )
            .wide(),
        ],
        row: replication_controller_row,
        order: None,
    },
    Printer {
        group: Group::Plain("apps"),
        resources: &["statefulsets"],
        columns: &[
            NAME,
            Column::string("Ready", Doc::Text("Number of the pod with ready state")),
            AGE,
            CONTAINERS,
            IMAGES,
        ],
        row: stateful_set_row,
        order: None,
    },
    Printer {
        group: Group::Plain("apps"),
        resources: &["daemonsets"],
        columns: &[
            NAME,
            Column::integer(
                "Desired",
                Doc::Field(schema_of::<apps::DaemonSetStatus>, "desiredNumberScheduled"),
            ),
            Column::integer(
                "Current",
                Doc::Field(schema_of::<apps::DaemonSetStatus>, "currentNumberScheduled"),
            ),
            Column::integer(
                "Ready",
                Doc::Field(schema_of::<apps::DaemonSetStatus>, "numberReady"),
            ),
            Column::integer(
                "Up-to-date",
                Doc::Field(schema_of::<apps::DaemonSetStatus>, "updatedNumberScheduled"),
            ),
            Column::integer(
                "Available",
                Doc::Field(schema_of::<apps::DaemonSetStatus>, "numberAvailable"),
            ),
            Column::string(
                "Node Selector",
                Doc::Field(schema_of::<core::PodSpec>, "nodeSelector"),
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            Column::string(
                "Selector",
                Doc::Field(schema_of::<apps::DaemonSetSpec>, "selector"),
            )
            .wide(),
        ],
        row: daemon_set_row,
        order: None,
    },
    Printer {
        group: Group::Plain("batch"),
        resources: &["jobs"],
        columns: &[
            NAME,
            Column::string("Status", Doc::Text("Status of the job.")),
            Column::string(
                "Completions",
                Doc::Field(schema_of::<batch::JobStatus>, "succeeded"),
            ),
            Column::string("Duration", Doc::Text("Time required to complete the job.")),
            AGE,
            CONTAINERS,
            IMAGES,
            Column::string(
                "Selector",
                Doc::Field(schema_of::<batch::JobSpec>, "selector"),
            )
            .wide(),
        ],
        row: job_row,
        order: None,
    },
    Printer {
        group: Group::Plain("batch"),
        resources: &["cronjobs"],
        columns: &[
            NAME,
            Column::string(
                "Schedule",
                Doc::Field(schema_of::<batch::CronJobSpec>, "schedule"),
            ),
            Column::string(
                "Timezone",
                Doc::Field(schema_of::<batch::CronJobSpec>, "timeZone"),
            ),
            Column::boolean(
                "Suspend",
                Doc::Field(schema_of::<batch::CronJobSpec>, "suspend"),
            ),
            Column::integer(
                "Active",
                Doc::Field(schema_of::<batch::CronJobStatus>, "active"),
            ),
            Column::string(
                "Last Schedule",
                Doc::Field(schema_of::<batch::CronJobStatus>, "lastScheduleTime"),
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            Column::string(
                "Selector",
                Doc::Field(schema_of::<batch::JobSpec>, "selector"),
            )
            .wide(),
        ],
        row: cron_job_row,
        order: None,
    },
    Printer {
        group: Group::Plain("apps"),
        resources: &["controllerrevisions"],
        columns: &[
            NAME,
            Column::string("Controller", Doc::Text("Controller of the object")),
            Column::string(
                "Revision",
                Doc::Field(schema_of::<apps::ControllerRevision>, "revision"),
            ),
            AGE,
        ],
        row: controller_revision_row,
        order: None,
    },
];

fn name(v: &Value) -> Value {
    text(v, "/metadata/name").into()
}

/// The containers, images and selector cells of a workload's wide columns.
fn wide_template(v: &Value, spec: &str, selector: Value) -> [Value; 3] {
    let (names, images) = format::containers(v.pointer(spec));
    [names.into(), images.into(), selector]
}

fn deployment_row(d: &Value, ctx: &PrintContext) -> Row {
    let selector = match format::selector(d.pointer("/spec/selector")) {
        Ok(s) => s,
        Err(_) => "<invalid>".to_owned(),
    };
    let mut cells = vec![
        name(d),
        format!(
            "{}/{}",
            int(d, "/status/readyReplicas"),
            int(d, "/spec/replicas")
        )
        .into(),
        int(d, "/status/updatedReplicas").into(),
        int(d, "/status/availableReplicas").into(),
        format::age(d, ctx.now).into(),
    ];
    cells.extend(wide_template(d, "/spec/template/spec", selector.into()));
    cells.into()
}

fn replica_set_row(rs: &Value, ctx: &PrintContext) -> Row {
    let mut cells = vec![
        name(rs),
        int(rs, "/spec/replicas").into(),
        int(rs, "/status/replicas").into(),
        int(rs, "/status/readyReplicas").into(),
        format::age(rs, ctx.now).into(),
    ];
    let selector = format::selector_cell(rs.pointer("/spec/selector"));
    cells.extend(wide_template(rs, "/spec/template/spec", selector.into()));
    cells.into()
}

fn replication_controller_row(rc: &Value, ctx: &PrintContext) -> Row {
    let mut cells = vec![
        name(rc),
        int(rc, "/spec/replicas").into(),
        int(rc, "/status/replicas").into(),
        int(rc, "/status/readyReplicas").into(),
        format::age(rc, ctx.now).into(),
    ];
    let selector = format::labels(rc.pointer("/spec/selector"));
    cells.extend(wide_template(rc, "/spec/template/spec", selector.into()));
    cells.into()
}

fn stateful_set_row(ss: &Value, ctx: &PrintContext) -> Row {
    let (names, images) = format::containers(ss.pointer("/spec/template/spec"));
    vec![
        name(ss),
        format!(
            "{}/{}",
            int(ss, "/status/readyReplicas"),
            int(ss, "/spec/replicas")
        )
        .into(),
        format::age(ss, ctx.now).into(),
        names.into(),
        images.into(),
    ]
    .into()
}

fn daemon_set_row(ds: &Value, ctx: &PrintContext) -> Row {
    let mut cells = vec![
        name(ds),
        int(ds, "/status/desiredNumberScheduled").into(),
        int(ds, "/status/currentNumberScheduled").into(),
        int(ds, "/status/numberReady").into(),
        int(ds, "/status/updatedNumberScheduled").into(),
        int(ds, "/status/numberAvailable").into(),
        format::labels(ds.pointer("/spec/template/spec/nodeSelector")).into(),
        format::age(ds, ctx.now).into(),
    ];
    let selector = format::selector_cell(ds.pointer("/spec/selector"));
    cells.extend(wide_template(ds, "/spec/template/spec", selector.into()));
    cells.into()
}

/// Whether the job's condition `kind` is `True` (the first condition of that type).
fn job_condition(job: &Value, kind: &str) -> bool {
    format::items(job, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == kind)
        .is_some_and(|c| text(c, "/status") == "True")
}

fn job_row(job: &Value, ctx: &PrintContext) -> Row {
    let succeeded = int(job, "/status/succeeded");
    let completions = match job.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(total) => format!("{succeeded}/{total}"),
        None => match int(job, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (
        format::time(job, "/status/startTime"),
        format::time(job, "/status/completionTime"),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => format::human_duration(ctx.now - start),
        (Some(start), Some(end)) => format::human_duration(end - start),
    };
    let deleting = job
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|d| !d.is_null());
    let status = if job_condition(job, "Complete") {
        "Complete"
    } else if job_condition(job, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if job_condition(job, "Suspended") {
        "Suspended"
    } else if job_condition(job, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let mut cells = vec![
        name(job),
        status.into(),
        completions.into(),
        duration.into(),
        format::age(job, ctx.now).into(),
    ];
    let selector = format::selector_cell(job.pointer("/spec/selector"));
    cells.extend(wide_template(job, "/spec/template/spec", selector.into()));
    cells.into()
}

fn cron_job_row(cj: &Value, ctx: &PrintContext) -> Row {
    let last = if cj
        .pointer("/status/lastScheduleTime")
        .is_some_and(|t| !t.is_null())
    {
        format::since(cj, "/status/lastScheduleTime", ctx.now)
    } else {
        "<none>".to_owned()
    };
    let mut cells = vec![
        name(cj),
        text(cj, "/spec/schedule").into(),
        format::or(text(cj, "/spec/timeZone"), "<none>").into(),
        format::bool_text(format::flag(cj, "/spec/suspend")).into(),
        format::count(cj, "/status/active").into(),
        last.into(),
        format::age(cj, ctx.now).into(),
    ];
    let selector = format::selector_cell(cj.pointer("/spec/jobTemplate/spec/selector"));
    cells.extend(wide_template(
        cj,
        "/spec/jobTemplate/spec/template/spec",
        selector.into(),
    ));
    cells.into()
}

fn controller_revision_row(cr: &Value, ctx: &PrintContext) -> Row {
    let controller = format::items(cr, "/metadata/ownerReferences")
        .iter()
        .find(|r| format::flag(r, "/controller") == Some(true))
        .map_or_else(
            || "<none>".to_owned(),
            |r| {
                let group = text(r, "/apiVersion")
                    .rsplit_once('/')
                    .map_or("", |(g, _)| g);
                let kind = text(r, "/kind");
                let qualified = if group.is_empty() {
                    kind.to_owned()
                } else {
                    format!("{kind}.{group}")
                };
                if qualified.is_empty() {
                    text(r, "/name").to_owned()
                } else {
                    format!("{}/{}", qualified.to_lowercase(), text(r, "/name"))
                }
            },
        );
    vec![
        name(cr),
        controller.into(),
        int(cr, "/revision").into(),
        format::age(cr, ctx.now).into(),
    ]
    .into()
}

#[cfg(test)]
#[path = "workloads_tests.rs"]
mod tests;
