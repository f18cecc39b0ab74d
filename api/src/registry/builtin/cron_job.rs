//! batch/v1 CronJob: defaults, the schedule and time zone, the concurrency policy, the job
//! template (Job rules, no selector), history limits, the 52-character name, and an empty
//! status on create.

use serde_json::Value;
use serde_json::json;

use super::cron_schedule::known_time_zone;
use super::cron_schedule::parse_schedule;
use super::defaults::default_cron_job;
use super::fields::nonnegative;
use super::fields::set_status;
use super::fields::str_at;
use super::job::validate_job_spec;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// The longest CronJob name: a Job name (63) less the controller's 11-character suffix.
const MAX_NAME: usize = 52;

/// The strategy of `batch/v1` CronJob.
#[derive(Debug, Default)]
pub struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    fn default_fields(&self, obj: &mut Value) {
        default_cron_job(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_status(obj, json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = str_at(obj, "/metadata/name");
        // Names are immutable, so checking every write equals upstream's create-only check.
        if name.len() > MAX_NAME {
            errs.push(FieldError::invalid(
                "metadata.name",
                name,
                "must be no more than 52 characters",
            ));
        }
        errs.extend(validate_spec(obj));
        errs
    }
}

/// upstream's `validateCronJobSpec`. Upstream lets an update keep a `TZ=` schedule stored
/// before the rule existed; no such object can exist here, so every write is checked as a
/// create.
fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schedule = str_at(obj, "/spec/schedule");
    let time_zone = obj.pointer("/spec/timeZone").and_then(Value::as_str);
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else {
        errs.extend(validate_schedule(schedule));
    }
    errs.extend(nonnegative(
        obj,
        "/spec",
        "spec",
        &["startingDeadlineSeconds"],
    ));
    if let Some(tz) = time_zone {
        errs.extend(validate_time_zone(tz));
    }
    match str_at(obj, "/spec/concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required("spec.concurrencyPolicy", "")),
        other => errs.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    errs.extend(validate_job_spec(
        obj,
        "/spec/jobTemplate/spec",
        "spec.jobTemplate.spec",
    ));
    if let Some(selector) = obj.pointer("/spec/jobTemplate/spec/selector") {
        errs.push(FieldError::invalid(
            "spec.jobTemplate.spec.selector",
            selector.clone(),
            "`selector` will be auto-generated",
        ));
    }
    if obj
        .pointer("/spec/jobTemplate/spec/manualSelector")
        .and_then(Value::as_bool)
        == Some(true)
    {
        errs.push(FieldError::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            true,
            &["nil", "false"],
        ));
    }
    errs.extend(nonnegative(
        obj,
        "/spec",
        "spec",
        &["successfulJobsHistoryLimit", "failedJobsHistoryLimit"],
    ));
    errs
}

/// upstream's `validateScheduleFormat` for a schedule that may not use `TZ=`.
fn validate_schedule(schedule: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Err(e) = parse_schedule(schedule) {
        errs.push(FieldError::invalid("spec.schedule", schedule, e));
    }
    if schedule.contains("TZ") {
        errs.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
    errs
}

/// upstream's `validateTimeZone`: IANA naming, not `Local`, and a zone that exists.
fn validate_time_zone(tz: &str) -> Vec<FieldError> {
    const PATH: &str = "spec.timeZone";
    if tz.is_empty() {
        return vec![FieldError::invalid(
            PATH,
            tz,
            "timeZone must be nil or non-empty string",
        )];
    }
    let unknown = || {
        vec![FieldError::invalid(
            PATH,
            tz,
            format!("unknown time zone {tz}"),
        )]
    };
    let bad_part = |part: &str| {
        part == "."
            || part == ".."
            || part.starts_with('-')
            || part.is_empty()
            || part.len() > 14
            || !part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_+".contains(c))
    };
    if tz.split('/').any(bad_part) {
        return unknown();
    }
    if tz.eq_ignore_ascii_case("Local") {
        return vec![FieldError::invalid(
            PATH,
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        )];
    }
    if known_time_zone(tz) {
        Vec::new()
    } else {
        unknown()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cron(schedule: &str) -> Value {
        let mut c = json!({"metadata": {"name": "c"}, "spec": {
            "schedule": schedule,
            "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "i"}]
            }}}}
        }});
        CronJobStrategy.default_fields(&mut c);
        c
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_defaulted_cron_job_is_valid() {
        assert!(CronJobStrategy.validate(&cron("@hourly")).is_empty());
        let mut c = cron("0 * * * *");
        c["spec"]["timeZone"] = "Europe/Berlin".into();
        assert!(CronJobStrategy.validate(&c).is_empty());
    }

    #[test]
    fn schedule_rules() {
        assert_eq!(
            messages(CronJobStrategy.validate(&cron(""))),
            ["spec.schedule: Required value"]
        );
        assert_eq!(
            messages(CronJobStrategy.validate(&cron("61 * * * *"))),
            [
                r#"spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#
            ]
        );
        assert_eq!(
            messages(CronJobStrategy.validate(&cron("TZ=UTC 0 * * * *"))),
            [
                r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#
            ]
        );
    }

    #[test]
    fn time_zone_rules() {
        let cases = [
            ("Mars/Olympus", "unknown time zone Mars/Olympus"),
            ("../etc", "unknown time zone ../etc"),
            (
                "Local",
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            ),
            ("", "timeZone must be nil or non-empty string"),
        ];
        for (tz, message) in cases {
            let mut c = cron("@daily");
            c["spec"]["timeZone"] = tz.into();
            assert_eq!(
                messages(CronJobStrategy.validate(&c)),
                [format!("spec.timeZone: Invalid value: {tz:?}: {message}")]
            );
        }
    }

    #[test]
    fn policy_template_and_name() {
        let mut c = cron("@daily");
        c["spec"]["concurrencyPolicy"] = "Sometimes".into();
        c["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always".into();
        c["spec"]["jobTemplate"]["spec"]["selector"] = json!({"matchLabels": {"a": "b"}});
        c["metadata"]["name"] = "x".repeat(53).into();
        assert_eq!(
            messages(CronJobStrategy.validate(&c)),
            [
                format!(r#"metadata.name: Invalid value: "{}": must be no more than 52 characters"#, "x".repeat(53)),
                r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#.to_owned(),
                r#"spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#.to_owned(),
                r#"spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated"#.to_owned(),
            ]
        );
    }
}
