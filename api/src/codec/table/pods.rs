//! Pods and pod templates. A pod's row is the status kube-apiserver computes from its
//! phase, reason, init and app container states and deletion (`Init:1/2`,
//! `CrashLoopBackOff`, `Completed`, `Terminating`, ...), its ready containers (restartable
//! init containers count), and its restarts with the time since the last one.

use chrono::DateTime;
use chrono::Utc;
use k8s_openapi::api::core::v1 as core;
use serde_json::Value;
use serde_json::json;

use super::columns::AGE;
use super::columns::Column;
use super::columns::Doc;
use super::columns::NAME;
use super::columns::schema_of;
use super::format;
use super::format::text;
use super::printer::Group;
use super::printer::PrintContext;
use super::printer::Printer;
use super::printer::Row;

/// The printers of this family.
pub(super) const PRINTERS: &[Printer] = &[
    Printer {
        group: Group::Core,
        resources: &["pods"],
        columns: POD_COLUMNS,
        row: pod_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["podtemplates"],
        columns: &[
            NAME,
            Column::string(
                "Containers",
                Doc::Text("Names of each container in the template."),
            ),
            Column::string(
                "Images",
                Doc::Text("Images referenced by each container in the template."),
            ),
            Column::string("Pod Labels", Doc::Text("The labels for the pod template.")),
        ],
        row: pod_template_row,
        order: None,
    },
];

const POD_COLUMNS: &[Column] = &[
    NAME,
    Column::string(
        "Ready",
        Doc::Text("The aggregate readiness state of this pod for accepting traffic."),
    ),
    Column::string(
        "Status",
        Doc::Text("The aggregate status of the containers in this pod."),
    ),
    Column::string(
        "Restarts",
        Doc::Text(
            "The number of times the containers in this pod have been restarted and when the \
             last container in this pod has restarted.",
        ),
    ),
    AGE,
    Column::string("IP", Doc::Field(schema_of::<core::PodStatus>, "podIP")).wide(),
    Column::string("Node", Doc::Field(schema_of::<core::PodSpec>, "nodeName")).wide(),
    Column::string(
        "Nominated Node",
        Doc::Field(schema_of::<core::PodStatus>, "nominatedNodeName"),
    )
    .wide(),
    Column::string(
        "Readiness Gates",
        Doc::Field(schema_of::<core::PodSpec>, "readinessGates"),
    )
    .wide(),
];

/// Whether the condition `kind` of the pod is `True` (the first condition of that type).
fn condition_true(pod: &Value, kind: &str) -> bool {
    format::items(pod, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == kind)
        .is_some_and(|c| text(c, "/status") == "True")
}

/// Whether a container of the pod's spec is a restartable init container (a sidecar).
fn restartable(pod: &Value, init_container: &str) -> bool {
    format::items(pod, "/spec/initContainers")
        .iter()
        .find(|c| text(c, "/name") == init_container)
        .is_some_and(|c| text(c, "/restartPolicy") == "Always")
}

/// Restarts and the latest end of a previous run, summed over container statuses.
#[derive(Default)]
struct Restarts {
    count: i64,
    last: Option<DateTime<Utc>>,
}

impl Restarts {
    fn add(&mut self, status: &Value) {
        self.count += format::int(status, "/restartCount");
        if let Some(end) = format::time(status, "/lastState/terminated/finishedAt") {
            self.last = Some(self.last.map_or(end, |t| t.max(end)));
        }
    }
}

/// The reason of a terminated container without one: its signal, else its exit code.
fn exit_text(terminated: &Value, prefix: &str) -> String {
    match format::int(terminated, "/signal") {
        0 => format!("{prefix}ExitCode:{}", format::int(terminated, "/exitCode")),
        signal => format!("{prefix}Signal:{signal}"),
    }
}

/// The state of the init containers: whether the pod is still initializing, with the
/// reason to show then.
fn init_state(
    pod: &Value,
    ready: &mut i64,
    restarts: &mut Restarts,
    sidecars: &mut Restarts,
) -> Option<String> {
    let total_init = format::items(pod, "/spec/initContainers").len();
    for (i, status) in format::items(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let name = text(status, "/name");
        restarts.add(status);
        let sidecar = restartable(pod, name);
        if sidecar {
            sidecars.add(status);
        }
        let terminated = status.pointer("/state/terminated");
        let waiting_reason = text(status, "/state/waiting/reason");
        if terminated.is_some_and(|t| format::int(t, "/exitCode") == 0) {
            continue;
        }
        if sidecar && format::flag(status, "/started") == Some(true) {
            if format::flag(status, "/ready") == Some(true) {
                *ready += 1;
            }
            continue;
        }
        return Some(if let Some(t) = terminated {
            match text(t, "/reason") {
                "" => exit_text(t, "Init:"),
                reason => format!("Init:{reason}"),
            }
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{total_init}")
        });
    }
    None
}

/// The pod's row (READY STATUS RESTARTS AGE; wide: IP NODE NOMINATED NODE READINESS GATES).
fn pod_row(pod: &Value, ctx: &PrintContext) -> Row {
    let phase = text(pod, "/status/phase");
    let mut reason = format::or(text(pod, "/status/reason"), phase);
    if format::items(pod, "/status/conditions")
        .iter()
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated")
    {
        reason = "SchedulingGated".to_owned();
    }
    let sidecar_count = format::items(pod, "/spec/initContainers")
        .iter()
        .filter(|c| text(c, "/restartPolicy") == "Always")
        .count();
    let total = format::items(pod, "/spec/containers").len() + sidecar_count;
    let mut ready = 0_i64;
    let mut restarts = Restarts::default();
    let mut sidecars = Restarts::default();
    let initializing = init_state(pod, &mut ready, &mut restarts, &mut sidecars);
    let initializing_now = initializing.is_some();
    if let Some(init_reason) = initializing {
        reason = init_reason;
    }
    if !initializing_now || condition_true(pod, "Initialized") {
        restarts = sidecars;
        let mut running = false;
        for status in format::items(pod, "/status/containerStatuses").iter().rev() {
            restarts.add(status);
            let waiting = text(status, "/state/waiting/reason");
            let terminated = status.pointer("/state/terminated");
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if let Some(t) = terminated {
                reason = match text(t, "/reason") {
                    "" => exit_text(t, ""),
                    r => r.to_owned(),
                };
            } else if format::flag(status, "/ready") == Some(true)
                && status.pointer("/state/running").is_some()
            {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            reason = if condition_true(pod, "Ready") {
                "Running"
            } else {
                "NotReady"
            }
            .to_owned();
        }
    }
    let deleting = pod
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|d| !d.is_null());
    if deleting && text(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".to_owned();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".to_owned();
    }
    let restarts_cell = match restarts.last {
        Some(last) if restarts.count != 0 => {
            format!(
                "{} ({} ago)",
                restarts.count,
                format::human_duration(ctx.now - last)
            )
        }
        _ => restarts.count.to_string(),
    };
    let ip = format::items(pod, "/status/podIPs")
        .first()
        .map_or("", |ip| text(ip, "/ip"));
    let gates = format::items(pod, "/spec/readinessGates");
    let gates_cell = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let met = gates
            .iter()
            .filter(|g| {
                let kind = text(g, "/conditionType");
                format::items(pod, "/status/conditions")
                    .iter()
                    .find(|c| text(c, "/type") == kind)
                    .is_some_and(|c| text(c, "/status") == "True")
            })
            .count();
        format!("{met}/{}", gates.len())
    };
    let conditions = match phase {
        "Succeeded" => vec![completed(
            "Succeeded",
            "The pod has completed successfully.",
        )],
        "Failed" => vec![completed("Failed", "The pod failed.")],
        _ => Vec::new(),
    };
    Row {
        cells: vec![
            text(pod, "/metadata/name").into(),
            format!("{ready}/{total}").into(),
            reason.into(),
            restarts_cell.into(),
            format::age(pod, ctx.now).into(),
            format::or(ip, "<none>").into(),
            format::or(text(pod, "/spec/nodeName"), "<none>").into(),
            format::or(text(pod, "/status/nominatedNodeName"), "<none>").into(),
            gates_cell.into(),
        ],
        conditions,
    }
}

/// The `Completed` row condition of a finished pod.
fn completed(reason: &str, message: &str) -> Value {
    json!({"type": "Completed", "status": "True", "reason": reason, "message": message})
}

fn pod_template_row(template: &Value, _: &PrintContext) -> Row {
    let (names, images) = format::containers(template.pointer("/template/spec"));
    vec![
        text(template, "/metadata/name").into(),
        names.into(),
        images.into(),
        format::labels(template.pointer("/template/metadata/labels")).into(),
    ]
    .into()
}

#[cfg(test)]
#[path = "pods_tests.rs"]
mod tests;
