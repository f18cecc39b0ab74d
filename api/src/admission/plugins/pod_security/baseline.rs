//! The baseline checks of the Pod Security Standards, in pod-security-admission's order and
//! with its reasons and details.

use serde_json::Value;

use super::checks::Pod;
use super::checks::Violation;
use super::checks::containers_phrase;
use super::checks::join_quote;
use super::checks::name;
use super::checks::pluralize;
use super::checks::sorted;

/// The baseline checks every level above privileged runs, in order.
pub(super) const CHECKS: &[fn(&Pod<'_>) -> Option<Violation>] = &[
    app_armor_profile,
    capabilities,
    host_namespaces,
    host_path_volumes,
    host_ports,
    host_probes_and_lifecycle,
    privileged,
    proc_mount,
    se_linux_options,
    sysctls,
    windows_host_process,
];

/// `pod`, `container "a"` ... joined with ` and `: who sets a forbidden value.
fn setters(pod_sets: bool, containers: &[&str]) -> String {
    let mut who = Vec::new();
    if pod_sets {
        who.push("pod".to_owned());
    }
    if !containers.is_empty() {
        who.push(containers_phrase(containers));
    }
    who.join(" and ")
}

fn is_true(value: &Value) -> bool {
    value.as_bool() == Some(true)
}

/// AppArmor: the profile type may only be `RuntimeDefault` or `Localhost`, the beta
/// annotations only `runtime/default` or `localhost/...`.
fn app_armor_profile(pod: &Pod<'_>) -> Option<Violation> {
    let allowed_type = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut bad_values = Vec::new();
    let pod_type = pod.security_context()["appArmorProfile"]["type"].as_str();
    let pod_bad = pod_type.is_some_and(|t| !allowed_type(t));
    if pod_bad {
        bad_values.extend(pod_type.map(str::to_owned));
    }
    let mut bad_containers = Vec::new();
    for c in pod.containers() {
        if let Some(t) = c["securityContext"]["appArmorProfile"]["type"].as_str()
            && !allowed_type(t)
        {
            bad_containers.push(name(c));
            bad_values.push(t.to_owned());
        }
    }
    let annotation_prefix = "container.apparmor.security.beta.kubernetes.io/";
    let allowed_annotation =
        |v: &str| v.is_empty() || v == "runtime/default" || v.starts_with("localhost/");
    let annotations = sorted(
        pod.annotations()
            .filter(|(k, v)| k.starts_with(annotation_prefix) && !allowed_annotation(v))
            .map(|(k, v)| format!("{k}={v:?}")),
    );
    let mut details = Vec::new();
    let bad_values = sorted(bad_values);
    if pod_bad || !bad_containers.is_empty() {
        details.push(format!(
            "{} must not set securityContext.appArmorProfile.type to {}",
            setters(pod_bad, &bad_containers),
            join_quote(&bad_values)
        ));
    }
    details.extend(annotations.iter().cloned());
    if details.is_empty() {
        return None;
    }
    let count = bad_values.len() + annotations.len();
    Violation::new(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            count,
        ),
        details.join(", "),
    )
}

/// Capabilities beyond the default set may not be added.
fn capabilities(pod: &Pod<'_>) -> Option<Violation> {
    const ALLOWED: [&str; 13] = [
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    ];
    let mut bad_containers = Vec::new();
    let mut added = Vec::new();
    for c in pod.containers() {
        let adds = c["securityContext"]["capabilities"]["add"].as_array();
        let forbidden: Vec<&str> = adds
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|cap| !ALLOWED.contains(cap))
            .collect();
        if !forbidden.is_empty() {
            bad_containers.push(name(c));
            added.extend(forbidden);
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    Violation::new(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad_containers),
            join_quote(sorted(added))
        ),
    )
}

/// The host's network, PID and IPC namespaces may not be shared.
fn host_namespaces(pod: &Pod<'_>) -> Option<Violation> {
    let shared = sorted(
        ["hostNetwork", "hostPID", "hostIPC"]
            .into_iter()
            .filter(|key| is_true(&pod.spec[*key]))
            .map(|key| format!("{key}=true")),
    );
    match shared.is_empty() {
        true => None,
        false => Violation::new("host namespaces", shared.join(", ")),
    }
}

/// No hostPath volumes.
fn host_path_volumes(pod: &Pod<'_>) -> Option<Violation> {
    let volumes: Vec<&str> = pod.spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| !v["hostPath"].is_null())
        .map(name)
        .collect();
    if volumes.is_empty() {
        return None;
    }
    Violation::new(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", volumes.len()),
            join_quote(&volumes)
        ),
    )
}

/// No host ports.
fn host_ports(pod: &Pod<'_>) -> Option<Violation> {
    let mut bad_containers = Vec::new();
    let mut ports = Vec::new();
    for c in pod.containers() {
        let used: Vec<String> = c["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["hostPort"].as_i64())
            .filter(|port| *port != 0)
            .map(|port| port.to_string())
            .collect();
        if !used.is_empty() {
            bad_containers.push(name(c));
            ports.extend(used);
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    let ports = sorted(ports);
    Violation::new(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad_containers),
            pluralize("uses", "use", bad_containers.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    )
}

/// Probes and lifecycle handlers may not name a host (from 1.34).
fn host_probes_and_lifecycle(pod: &Pod<'_>) -> Option<Violation> {
    if !pod.version.at_least(34) {
        return None;
    }
    let mut bad_containers = Vec::new();
    let mut hosts = Vec::new();
    for c in pod.containers() {
        let handlers = [
            &c["livenessProbe"],
            &c["readinessProbe"],
            &c["startupProbe"],
            &c["lifecycle"]["postStart"],
            &c["lifecycle"]["preStop"],
        ];
        let named: Vec<&str> = handlers
            .into_iter()
            .flat_map(|h| [&h["httpGet"]["host"], &h["tcpSocket"]["host"]])
            .filter_map(Value::as_str)
            .filter(|host| !host.is_empty())
            .collect();
        if !named.is_empty() {
            bad_containers.push(name(c).to_owned());
            hosts.extend(named);
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    let containers = sorted(bad_containers);
    let hosts = sorted(hosts);
    Violation::new(
        "probe or lifecycle host",
        format!(
            "{} {} {} {} {}",
            pluralize("container", "containers", containers.len()),
            join_quote(&containers),
            pluralize("uses", "use", containers.len()),
            pluralize(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                hosts.len()
            ),
            join_quote(&hosts)
        ),
    )
}

/// No privileged containers.
fn privileged(pod: &Pod<'_>) -> Option<Violation> {
    let bad: Vec<&str> = pod
        .containers()
        .filter(|c| is_true(&c["securityContext"]["privileged"]))
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    Violation::new(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&bad)
        ),
    )
}

/// `/proc` may only be mounted with the default masking.
fn proc_mount(pod: &Pod<'_>) -> Option<Violation> {
    let mut bad_containers = Vec::new();
    let mut types = Vec::new();
    for c in pod.containers() {
        if let Some(mount) = c["securityContext"]["procMount"].as_str()
            && mount != "Default"
        {
            bad_containers.push(name(c));
            types.push(mount);
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    Violation::new(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&bad_containers),
            join_quote(sorted(types))
        ),
    )
}

/// SELinux: only the container types, and no user or role.
fn se_linux_options(pod: &Pod<'_>) -> Option<Violation> {
    let engine = pod.version.at_least(31);
    let allowed_type = |t: &str| {
        matches!(
            t,
            "" | "container_t" | "container_init_t" | "container_kvm_t"
        ) || (engine && t == "container_engine_t")
    };
    let mut bad_types = Vec::new();
    let (mut set_user, mut set_role) = (false, false);
    let mut valid = |options: &Value| {
        let mut ok = true;
        let kind = options["type"].as_str().unwrap_or_default();
        if !allowed_type(kind) {
            ok = false;
            bad_types.push(kind.to_owned());
        }
        if !options["user"].as_str().unwrap_or_default().is_empty() {
            ok = false;
            set_user = true;
        }
        if !options["role"].as_str().unwrap_or_default().is_empty() {
            ok = false;
            set_role = true;
        }
        ok
    };
    let pod_options = &pod.security_context()["seLinuxOptions"];
    let pod_bad = pod_options.is_object() && !valid(pod_options);
    let mut bad_containers = Vec::new();
    for c in pod.containers() {
        let options = &c["securityContext"]["seLinuxOptions"];
        if options.is_object() && !valid(options) {
            bad_containers.push(name(c));
        }
    }
    if !pod_bad && bad_containers.is_empty() {
        return None;
    }
    let bad_types = sorted(bad_types);
    let mut data = Vec::new();
    if !bad_types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", bad_types.len()),
            join_quote(&bad_types)
        ));
    }
    if set_user {
        data.push("user may not be set".to_owned());
    }
    if set_role {
        data.push("role may not be set".to_owned());
    }
    Violation::new(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters(pod_bad, &bad_containers),
            data.join("; ")
        ),
    )
}

/// Only the safe sysctls of the version.
fn sysctls(pod: &Pod<'_>) -> Option<Violation> {
    let v = pod.version;
    let allowed = |name: &str| match name {
        "kernel.shm_rmid_forced"
        | "net.ipv4.ip_local_port_range"
        | "net.ipv4.tcp_syncookies"
        | "net.ipv4.ping_group_range"
        | "net.ipv4.ip_unprivileged_port_start" => true,
        "net.ipv4.ip_local_reserved_ports" => v.at_least(27),
        "net.ipv4.tcp_keepalive_time"
        | "net.ipv4.tcp_fin_timeout"
        | "net.ipv4.tcp_keepalive_intvl"
        | "net.ipv4.tcp_keepalive_probes" => v.at_least(29),
        "net.ipv4.tcp_rmem" | "net.ipv4.tcp_wmem" => v.at_least(32),
        _ => false,
    };
    let forbidden: Vec<&str> = pod.security_context()["sysctls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .filter(|name| !allowed(name))
        .collect();
    match forbidden.is_empty() {
        true => None,
        false => Violation::new("forbidden sysctls", forbidden.join(", ")),
    }
}

/// No Windows host processes.
fn windows_host_process(pod: &Pod<'_>) -> Option<Violation> {
    let host = |sc: &Value| is_true(&sc["windowsOptions"]["hostProcess"]);
    let pod_bad = host(pod.security_context());
    let bad: Vec<&str> = pod
        .containers()
        .filter(|c| host(&c["securityContext"]))
        .map(name)
        .collect();
    if !pod_bad && bad.is_empty() {
        return None;
    }
    Violation::new(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters(pod_bad, &bad)
        ),
    )
}

/// Seccomp at baseline (restricted has its own check): the profile may not be
/// `Unconfined`; before 1.19, the alpha annotations are checked instead.
pub(super) fn seccomp_profile(pod: &Pod<'_>) -> Option<Violation> {
    if !pod.version.at_least(19) {
        let pod_key = "seccomp.security.alpha.kubernetes.io/pod";
        let prefix = "container.seccomp.security.alpha.kubernetes.io/";
        let valid = |v: &str| {
            v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/")
        };
        let names: Vec<String> = pod
            .containers()
            .map(|c| format!("{prefix}{}", name(c)))
            .collect();
        let forbidden = sorted(
            pod.annotations()
                .filter(|(k, v)| (*k == pod_key || names.iter().any(|n| n == k)) && !valid(v))
                .map(|(k, v)| format!("{k}={v:?}")),
        );
        if forbidden.is_empty() {
            return None;
        }
        return Violation::new(
            "seccompProfile",
            format!(
                "forbidden {} {}",
                pluralize("annotation", "annotations", forbidden.len()),
                forbidden.join(", ")
            ),
        );
    }
    let valid = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut bad_values = Vec::new();
    let pod_type = pod.security_context()["seccompProfile"]["type"].as_str();
    let pod_bad = pod.security_context()["seccompProfile"].is_object()
        && !valid(pod_type.unwrap_or_default());
    if pod_bad {
        bad_values.push(pod_type.unwrap_or_default());
    }
    let mut bad_containers = Vec::new();
    for c in pod.containers() {
        let profile = &c["securityContext"]["seccompProfile"];
        let kind = profile["type"].as_str().unwrap_or_default();
        if profile.is_object() && !valid(kind) {
            bad_containers.push(name(c));
            bad_values.push(kind);
        }
    }
    if !pod_bad && bad_containers.is_empty() {
        return None;
    }
    Violation::new(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters(pod_bad, &bad_containers),
            join_quote(sorted(bad_values))
        ),
    )
}
