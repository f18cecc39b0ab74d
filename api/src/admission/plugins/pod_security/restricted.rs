//! The restricted checks of the Pod Security Standards (run after the baseline ones), in
//! pod-security-admission's order and with its reasons and details.

use serde_json::Value;

use super::checks::Pod;
use super::checks::Violation;
use super::checks::containers_phrase;
use super::checks::join_quote;
use super::checks::name;
use super::checks::sorted;

/// The restricted checks, in order.
pub(super) const CHECKS: &[fn(&Pod<'_>) -> Option<Violation>] = &[
    allow_privilege_escalation,
    capabilities,
    volumes,
    run_as_non_root,
    run_as_user,
    seccomp_profile,
];

/// Whether a Windows pod is exempt from a check from 1.25 (its fields do not apply there).
fn windows_exempt(pod: &Pod<'_>) -> bool {
    pod.version.at_least(25) && pod.is_windows()
}

/// `pod and containers "a"` / `container "a"` / `pod`.
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

/// `allowPrivilegeEscalation` must be false (from 1.8).
fn allow_privilege_escalation(pod: &Pod<'_>) -> Option<Violation> {
    if !pod.version.at_least(8) || windows_exempt(pod) {
        return None;
    }
    let bad: Vec<&str> = pod
        .containers()
        .filter(|c| c["securityContext"]["allowPrivilegeEscalation"].as_bool() != Some(false))
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    Violation::new(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&bad)
        ),
    )
}

/// Containers drop `ALL` and add at most `NET_BIND_SERVICE` (from 1.22).
fn capabilities(pod: &Pod<'_>) -> Option<Violation> {
    if !pod.version.at_least(22) || windows_exempt(pod) {
        return None;
    }
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    let mut added = Vec::new();
    for c in pod.containers() {
        let caps = &c["securityContext"]["capabilities"];
        if !caps.is_object() {
            missing_drop.push(name(c));
            continue;
        }
        let list = |key: &str| {
            caps[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
        };
        if !list("drop").any(|cap| cap == "ALL") {
            missing_drop.push(name(c));
        }
        let forbidden: Vec<&str> = list("add")
            .filter(|cap| *cap != "NET_BIND_SERVICE")
            .collect();
        if !forbidden.is_empty() {
            adding.push(name(c));
            added.extend(forbidden);
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(sorted(added))
        ));
    }
    match details.is_empty() {
        true => None,
        false => Violation::new("unrestricted capabilities", details.join("; ")),
    }
}

/// Only the volume types that need no privilege.
fn volumes(pod: &Pod<'_>) -> Option<Violation> {
    const ALLOWED: [&str; 8] = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    let restricted = sorted(
        pod.spec["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| {
                let set = |key: &&str| v.get(*key).is_some_and(|s| !s.is_null());
                !ALLOWED.iter().any(set)
            })
            .map(name),
    );
    if restricted.is_empty() {
        return None;
    }
    // Go's %q of a string list: ["a" "b"].
    let listed = restricted
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(" ");
    Violation::new(
        "restricted volume types",
        format!("volumes [{listed}] have restricted types"),
    )
}

/// `runAsNonRoot` must be true, on the pod or on every container.
fn run_as_non_root(pod: &Pod<'_>) -> Option<Violation> {
    let pod_value = pod.security_context()["runAsNonRoot"].as_bool();
    let pod_bad = pod_value == Some(false);
    let pod_non_root = pod_value == Some(true);
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in pod.containers() {
        match c["securityContext"]["runAsNonRoot"].as_bool() {
            Some(false) => explicit.push(name(c)),
            Some(true) => {}
            None if !pod_non_root => implicit.push(name(c)),
            None => {}
        }
    }
    if pod_bad || !explicit.is_empty() {
        return Violation::new(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters(pod_bad, &explicit)
            ),
        );
    }
    if implicit.is_empty() {
        return None;
    }
    Violation::new(
        "runAsNonRoot != true",
        format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&implicit)
        ),
    )
}

/// No `runAsUser=0` (from 1.23).
fn run_as_user(pod: &Pod<'_>) -> Option<Violation> {
    if !pod.version.at_least(23) {
        return None;
    }
    let root = |sc: &Value| sc["runAsUser"].as_i64() == Some(0);
    let pod_bad = root(pod.security_context());
    let bad: Vec<&str> = pod
        .containers()
        .filter(|c| root(&c["securityContext"]))
        .map(name)
        .collect();
    if !pod_bad && bad.is_empty() {
        return None;
    }
    Violation::new(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters(pod_bad, &bad)),
    )
}

/// A seccomp profile of `RuntimeDefault` or `Localhost`, on the pod or on every container
/// (from 1.19).
fn seccomp_profile(pod: &Pod<'_>) -> Option<Violation> {
    if !pod.version.at_least(19) || windows_exempt(pod) {
        return None;
    }
    let valid = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut bad_values = Vec::new();
    let pod_profile = &pod.security_context()["seccompProfile"];
    let pod_type = pod_profile["type"].as_str().unwrap_or_default();
    let (mut pod_bad, mut pod_set) = (false, false);
    if pod_profile.is_object() {
        match valid(pod_type) {
            true => pod_set = true,
            false => {
                pod_bad = true;
                bad_values.push(pod_type);
            }
        }
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in pod.containers() {
        let profile = &c["securityContext"]["seccompProfile"];
        let kind = profile["type"].as_str().unwrap_or_default();
        if profile.is_object() {
            if !valid(kind) {
                explicit.push(name(c));
                bad_values.push(kind);
            }
        } else if !pod_set {
            implicit.push(name(c));
        }
    }
    if pod_bad || !explicit.is_empty() {
        return Violation::new(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                setters(pod_bad, &explicit),
                join_quote(sorted(bad_values))
            ),
        );
    }
    if implicit.is_empty() {
        return None;
    }
    Violation::new(
        "seccompProfile",
        format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&implicit)
        ),
    )
}
