//! batch/v1 Job: defaults, the generated selector and template labels (unless
//! `manualSelector`), the job spec rules shared with CronJob templates, an empty status on
//! create, the update locks, and the status counters.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::defaults::default_job;
use super::fields::immutable;
use super::fields::int_at;
use super::fields::nonnegative;
use super::fields::object_mut;
use super::fields::set_status;
use super::fields::str_at;
use super::workload::validate_template_at;
use crate::flavor::Flavor;
use crate::registry::DeleteOptions;
use crate::registry::GcPolicy;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::label_selector;
use crate::validation::validate_label_selector;

/// The label keys the server sets on a Job's pod template.
struct JobLabels {
    controller_uid: String,
    job_name: String,
}

impl JobLabels {
    fn new(flavor: Flavor) -> Self {
        let domain = flavor.label_domain();
        Self {
            controller_uid: format!("batch.{domain}/controller-uid"),
            job_name: format!("batch.{domain}/job-name"),
        }
    }
}

/// The warning of a Job delete that sets no propagation policy.
const ORPHANS_BY_DEFAULT: &str = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning";

/// The strategy of `batch/v1` Job.
pub struct JobStrategy {
    labels: JobLabels,
}

impl JobStrategy {
    /// The Job strategy of `flavor` (its label domain).
    pub fn new(flavor: Flavor) -> Self {
        Self {
            labels: JobLabels::new(flavor),
        }
    }

    fn manual(obj: &Value) -> bool {
        obj.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true)
    }

    /// upstream's `generateSelector`: the uid and name labels on the template (each kept if
    /// present) and the uid label in `selector.matchLabels`.
    fn generate_selector(&self, obj: &mut Value) {
        let uid = str_at(obj, "/metadata/uid").to_owned();
        let name = str_at(obj, "/metadata/name").to_owned();
        if let Some(labels) = object_mut(obj, "/spec/template/metadata/labels") {
            for (key, value) in [
                ("controller-uid", &uid),
                (self.labels.controller_uid.as_str(), &uid),
                ("job-name", &name),
                (self.labels.job_name.as_str(), &name),
            ] {
                labels
                    .entry(key.to_owned())
                    .or_insert_with(|| value.clone().into());
            }
        }
        if let Some(match_labels) = object_mut(obj, "/spec/selector/matchLabels") {
            match_labels
                .entry(self.labels.controller_uid.clone())
                .or_insert_with(|| uid.into());
        }
    }

    /// upstream's `validateGeneratedSelector`.
    fn validate_generated_selector(&self, obj: &Value) -> Vec<FieldError> {
        let Some(selector) = obj.pointer("/spec/selector").filter(|s| s.is_object()) else {
            return Vec::new();
        };
        if Self::manual(obj) {
            return Vec::new();
        }
        let uid = str_at(obj, "/metadata/uid");
        let name = str_at(obj, "/metadata/name");
        let labels = obj
            .pointer("/spec/template/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut errs = Vec::new();
        let expected = [
            ("controller-uid", uid),
            ("job-name", name),
            (self.labels.controller_uid.as_str(), uid),
            (self.labels.job_name.as_str(), name),
        ];
        for (key, value) in expected {
            let path = format!("spec.template.metadata.labels[{key}]");
            let detail = format!("must be '{value}'");
            match labels.get(key).and_then(Value::as_str) {
                None => errs.push(FieldError::required(path, detail)),
                Some(v) if v != value => errs.push(FieldError::invalid(
                    path,
                    Value::Object(labels.clone()),
                    detail,
                )),
                Some(_) => {}
            }
        }
        let expected_labels: Map<String, Value> = expected
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).into()))
            .collect();
        if !label_selector::matches(selector, &expected_labels) {
            errs.push(FieldError::invalid(
                "spec.selector",
                selector.clone(),
                "`selector` not auto-generated",
            ));
        }
        errs
    }
}

/// upstream's `validateJobSpec` of the job spec at `pointer` (path `path`): numbers,
/// completion mode, the pod template and its restart policy. Shared with CronJob's
/// `jobTemplate`.
pub fn validate_job_spec(obj: &Value, pointer: &str, path: &str) -> Vec<FieldError> {
    let mut errs = nonnegative(
        obj,
        pointer,
        path,
        &[
            "parallelism",
            "completions",
            "activeDeadlineSeconds",
            "backoffLimit",
            "ttlSecondsAfterFinished",
            "backoffLimitPerIndex",
            "maxFailedIndexes",
        ],
    );
    let spec = obj.pointer(pointer).cloned().unwrap_or(Value::Null);
    match str_at(&spec, "/completionMode") {
        "" | "NonIndexed" => {
            for field in ["backoffLimitPerIndex", "maxFailedIndexes"] {
                if let Some(v) = spec.get(field) {
                    errs.push(FieldError::invalid(
                        format!("{path}.{field}"),
                        v.clone(),
                        "requires indexed completion mode",
                    ));
                }
            }
        }
        "Indexed" if spec.get("completions").is_none() => errs.push(FieldError::required(
            format!("{path}.completions"),
            "when completion mode is Indexed",
        )),
        "Indexed" => {}
        other => errs.push(FieldError::not_supported(
            format!("{path}.completionMode"),
            other,
            &["NonIndexed", "Indexed"],
        )),
    }
    let template_path = format!("{path}.template");
    let template = spec.get("template").cloned().unwrap_or(Value::Null);
    errs.extend(validate_template_at(
        &template,
        &template_path,
        &["OnFailure", "Never"],
    ));
    // The pod defaults make an unset policy `Always`, so both read as "required".
    let policy = str_at(&template, "/spec/restartPolicy");
    if policy.is_empty() || policy == "Always" {
        errs.retain(|e| e.field != format!("{template_path}.spec.restartPolicy"));
        errs.push(FieldError::required(
            format!("{template_path}.spec.restartPolicy"),
            r#"valid values: "OnFailure", "Never""#,
        ));
    }
    errs
}

impl Strategy for JobStrategy {
    /// batch/v1 orphans a Job's pods by default, for compatibility, as Kubernetes does.
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::OrphanDependents
    }

    /// Kubernetes warns a delete that leaves the orphaning default in place.
    fn warnings_on_delete(&self, options: &DeleteOptions) -> Vec<String> {
        match (options.propagation_policy, options.orphan_dependents) {
            (None, None) => vec![ORPHANS_BY_DEFAULT.to_owned()],
            _ => Vec::new(),
        }
    }

    fn default_fields(&self, obj: &mut Value) {
        default_job(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_status(obj, json!({}));
        if !Self::manual(obj) {
            self.generate_selector(obj);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = self.validate_generated_selector(obj);
        errs.extend(validate_job_spec(obj, "/spec", "spec"));
        match obj.pointer("/spec/selector").filter(|s| !s.is_null()) {
            None => errs.push(FieldError::required("spec.selector", "")),
            Some(selector) => {
                errs.extend(validate_label_selector(Some(selector), "spec.selector"));
                let labels = obj
                    .pointer("/spec/template/metadata/labels")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                if !label_selector::matches(selector, &labels) {
                    errs.push(super::workload::mismatch(labels));
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs: Vec<FieldError> = [
            ("/spec/selector", "spec.selector"),
            ("/spec/completionMode", "spec.completionMode"),
            ("/spec/podFailurePolicy", "spec.podFailurePolicy"),
            ("/spec/backoffLimitPerIndex", "spec.backoffLimitPerIndex"),
            ("/spec/managedBy", "spec.managedBy"),
            ("/spec/successPolicy", "spec.successPolicy"),
        ]
        .iter()
        .filter_map(|(pointer, path)| immutable(new, old, pointer, path))
        .collect();
        errs.extend(completions_update(new, old));
        errs.extend(template_update(new, old));
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = nonnegative(
            new,
            "/status",
            "status",
            &["active", "succeeded", "failed", "ready", "terminating"],
        );
        if int_at(new, "/status/ready").unwrap_or(0) > int_at(new, "/status/active").unwrap_or(0) {
            errs.push(FieldError::invalid(
                "status.ready",
                int_at(new, "/status/ready").unwrap_or(0),
                "cannot set more ready pods than active",
            ));
        }
        for counter in ["failed", "succeeded"] {
            let pointer = format!("/status/{counter}");
            let (n, o) = (
                int_at(new, &pointer).unwrap_or(0),
                int_at(old, &pointer).unwrap_or(0),
            );
            if n < o {
                errs.push(FieldError::invalid(
                    format!("status.{counter}"),
                    n,
                    format!("cannot decrease the {counter} counter"),
                ));
            }
        }
        errs
    }
}

/// upstream's `validateCompletions` with elastic indexed jobs: immutable, except for an
/// Indexed job changing it together with parallelism.
fn completions_update(new: &Value, old: &Value) -> Option<FieldError> {
    let indexed = str_at(new, "/spec/completionMode") == "Indexed";
    if !indexed {
        return immutable(new, old, "/spec/completions", "spec.completions");
    }
    let completions = int_at(new, "/spec/completions")?;
    if new.pointer("/spec/completions") == old.pointer("/spec/completions")
        || Some(completions) == int_at(new, "/spec/parallelism")
    {
        return None;
    }
    Some(FieldError::invalid(
        "spec.completions",
        completions,
        "can only be modified in tandem with spec.parallelism",
    ))
}

/// The template is immutable, except for its scheduling directives while the job is
/// suspended and has never started.
fn template_update(new: &Value, old: &Value) -> Option<FieldError> {
    let suspended = old.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true)
        && old.pointer("/status/startTime").is_none();
    let mut old_template = old
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    let new_template = new
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    if suspended {
        for pointer in [
            "/spec/nodeSelector",
            "/spec/tolerations",
            "/metadata/annotations",
            "/metadata/labels",
            "/spec/schedulingGates",
            "/spec/affinity/nodeAffinity",
        ] {
            copy_at(&mut old_template, &new_template, pointer);
        }
    }
    (old_template != new_template)
        .then(|| FieldError::invalid("spec.template", new_template, "field is immutable"))
}

/// Makes `to[pointer]` what `from[pointer]` is (absent included).
fn copy_at(to: &mut Value, from: &Value, pointer: &str) {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return;
    };
    match from.pointer(pointer) {
        Some(v) => {
            if let Some(m) = object_mut(to, parent) {
                m.insert(key.to_owned(), v.clone());
            }
        }
        None => {
            if let Some(Value::Object(m)) = to.pointer_mut(parent) {
                m.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(spec: Value) -> Value {
        let mut j = json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": spec});
        let s = JobStrategy::new(Flavor::Kubernetes);
        s.default_fields(&mut j);
        s.prepare_for_create(&mut j);
        j
    }

    fn template(policy: &str) -> Value {
        json!({"spec": {"restartPolicy": policy, "containers": [{"name": "c", "image": "i"}]}})
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_selector_and_labels_are_generated() {
        let j = job(json!({"template": template("Never")}));
        assert_eq!(
            j["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        let labels = &j["spec"]["template"]["metadata"]["labels"];
        assert_eq!(labels["controller-uid"], "u-1");
        assert_eq!(labels["batch.kubernetes.io/job-name"], "pi");
        assert_eq!(labels["job-name"], "pi");
        assert_eq!(j["status"], json!({}));
        let s = JobStrategy::new(Flavor::Kubernetes);
        assert!(s.validate(&j).is_empty(), "{:?}", messages(s.validate(&j)));
        let p = job(json!({"template": template("Never")}));
        assert_eq!(
            p["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
            "u-1"
        );
        let mut platform = json!({"metadata": {"name": "pi", "uid": "u"}, "spec": {"template": template("Never")}});
        JobStrategy::new(Flavor::Platform).prepare_for_create(&mut platform);
        assert_eq!(
            platform["spec"]["template"]["metadata"]["labels"]["batch.platform.io/job-name"],
            "pi"
        );
    }

    #[test]
    fn a_foreign_selector_is_not_auto_generated() {
        let mut j = job(json!({"template": template("Never")}));
        j["spec"]["selector"] =
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "other"}});
        let s = JobStrategy::new(Flavor::Kubernetes);
        let m = messages(s.validate(&j));
        assert!(
            m.contains(&r#"spec.selector: Invalid value: {"matchLabels":{"batch.kubernetes.io/controller-uid":"other"}}: `selector` not auto-generated"#.to_owned()),
            "{m:?}"
        );
    }

    #[test]
    fn restart_policy_and_completion_mode() {
        let s = JobStrategy::new(Flavor::Kubernetes);
        let j = job(json!({"template": template("Always")}));
        assert_eq!(
            messages(s.validate(&j)),
            [
                r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#
            ]
        );
        let mut j = job(json!({"template": template("OnFailure"), "parallelism": -1}));
        j["spec"]["completionMode"] = "Indexed".into();
        if let Some(m) = j["spec"].as_object_mut() {
            m.remove("completions");
        }
        assert_eq!(
            messages(s.validate(&j)),
            [
                "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
                "spec.completions: Required value: when completion mode is Indexed",
            ]
        );
    }

    #[test]
    fn updates_lock_selector_template_and_completions() {
        let s = JobStrategy::new(Flavor::Kubernetes);
        let old = job(json!({"template": template("Never")}));
        let mut new = old.clone();
        new["spec"]["completions"] = 3.into();
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "j".into();
        new["spec"]["activeDeadlineSeconds"] = 10.into();
        let m = messages(s.validate_update(&new, &old));
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(
            m[0],
            "spec.completions: Invalid value: 3: field is immutable"
        );
        assert!(m[1].starts_with("spec.template: Invalid value: {"), "{m:?}");
        assert!(m[1].ends_with("}: field is immutable"), "{m:?}");
        let mut suspended = old.clone();
        suspended["spec"]["suspend"] = true.into();
        let mut moved = suspended.clone();
        moved["spec"]["template"]["spec"]["nodeSelector"] = json!({"zone": "a"});
        assert!(s.validate_update(&moved, &suspended).is_empty());
    }

    #[test]
    fn status_counters() {
        let s = JobStrategy::new(Flavor::Kubernetes);
        let old = json!({"status": {"active": 2, "failed": 1}});
        let new = json!({"status": {"active": 1, "ready": 2, "failed": 0}});
        assert_eq!(
            messages(s.validate_status_update(&new, &old)),
            [
                "status.ready: Invalid value: 2: cannot set more ready pods than active",
                "status.failed: Invalid value: 0: cannot decrease the failed counter",
            ]
        );
    }
}
