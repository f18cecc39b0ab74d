//! `--authorization-config` (R-ACC-162, R-ACC-199): the `AuthorizationConfiguration` file
//! (`apiserver.config.<group domain>/v1`, `v1beta1` or `v1alpha1`; YAML or JSON), decoded and
//! checked by kube-apiserver's rules into the [`Mode`]s of the chain. Every problem is
//! reported with its field path, worded as Kubernetes' field errors are.

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::cel::Program;
use apiary_api::validation::validate_dns_subdomain;
use serde::Deserialize;

use super::Mode;
use super::ModeType;
use super::WebhookMode;
use super::webhook::FailurePolicy;
use super::webhook::SarVersion;

/// The kind of the file's object.
const KIND: &str = "AuthorizationConfiguration";

/// The versions of the file kube-apiserver reads.
const VERSIONS: [&str; 3] = ["v1", "v1beta1", "v1alpha1"];

/// The longest webhook `timeout`.
const MAX_TIMEOUT: Duration = Duration::from_secs(30);

/// `authorizedTTL` when not given.
const DEFAULT_AUTHORIZED_TTL: Duration = Duration::from_secs(300);

/// `unauthorizedTTL` when not given.
const DEFAULT_UNAUTHORIZED_TTL: Duration = Duration::from_secs(30);

/// The most `matchConditions` of one webhook.
pub const MAX_MATCH_CONDITIONS: usize = 64;

/// The variable match conditions read: the v1 SubjectAccessReview's spec.
pub const REQUEST_VARIABLE: &str = "request";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Configuration {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    authorizers: Vec<Authorizer>,
}

#[derive(Debug, Deserialize)]
struct Authorizer {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    webhook: Option<Webhook>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Webhook {
    #[serde(default)]
    timeout: Option<String>,
    #[serde(default, rename = "authorizedTTL")]
    authorized_ttl: Option<String>,
    #[serde(default, rename = "unauthorizedTTL")]
    unauthorized_ttl: Option<String>,
    #[serde(default)]
    subject_access_review_version: String,
    #[serde(default)]
    match_condition_subject_access_review_version: String,
    #[serde(default)]
    failure_policy: String,
    #[serde(default)]
    connection_info: ConnectionInfo,
    #[serde(default)]
    match_conditions: Vec<MatchCondition>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConnectionInfo {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    kube_config_file: Option<String>,
}

#[derive(Debug, Deserialize)]
struct MatchCondition {
    #[serde(default)]
    expression: String,
}

/// Reads and checks the configuration file at `path`: its modes, in order, or why not.
pub fn load(path: &Path, flavor: Flavor) -> Result<Vec<Mode>, Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| vec![e.to_string()])?;
    parse(&text, flavor)
}

/// Decodes and checks a configuration file's `text` (YAML or JSON).
pub fn parse(text: &str, flavor: Flavor) -> Result<Vec<Mode>, Vec<String>> {
    let config: Configuration = serde_saphyr::from_str(text).map_err(|e| vec![e.to_string()])?;
    let group = format!("apiserver.config.{}", flavor.group_domain());
    let version_ok = config
        .api_version
        .split_once('/')
        .is_some_and(|(g, v)| g == group && VERSIONS.contains(&v));
    if config.kind != KIND || !version_ok {
        return Err(vec![format!(
            "no kind {:?} is registered for version {:?}: expected {KIND} in {group}/v1",
            config.kind, config.api_version
        )]);
    }
    validate(&config)
}

/// kube-apiserver's checks of the authorizers, then the names it expects of the modes that
/// are not webhooks (the mode's name in lower case).
fn validate(config: &Configuration) -> Result<Vec<Mode>, Vec<String>> {
    let mut errors = Vec::new();
    if config.authorizers.is_empty() {
        errors.push(
            "authorizers: Required value: at least one authorization mode must be defined"
                .to_owned(),
        );
    }
    let mut types = BTreeSet::new();
    let mut names = BTreeSet::new();
    let mut modes = Vec::new();
    for (i, a) in config.authorizers.iter().enumerate() {
        let at = format!("authorizers[{i}]");
        if a.kind.is_empty() {
            errors.push(format!("{at}.type: Required value"));
            continue;
        }
        let Some(kind) = ModeType::parse(&a.kind) else {
            errors.push(format!(
                "{at}.type: Unsupported value: {:?}: supported values: {}",
                a.kind,
                ModeType::ALL
                    .map(|t| format!("{:?}", t.as_str()))
                    .join(", ")
            ));
            continue;
        };
        if kind != ModeType::Webhook && !types.insert(kind) {
            errors.push(format!("{at}.type: Duplicate value: {:?}", a.kind));
            continue;
        }
        if a.name.is_empty() {
            errors.push(format!("{at}.name: Required value"));
        } else if names.contains(&a.name) {
            errors.push(format!("{at}.name: Duplicate value: {:?}", a.name));
        } else {
            let problems = validate_dns_subdomain(&a.name);
            if !problems.is_empty() {
                errors.push(format!(
                    "{at}.name: Invalid value: {:?}: authorizer name is invalid: {}",
                    a.name,
                    problems.join(", ")
                ));
            }
        }
        names.insert(a.name.clone());
        match (kind, &a.webhook) {
            (ModeType::Webhook, None) => {
                errors.push(format!(
                    "{at}.webhook: Required value: required when type=Webhook"
                ));
            }
            (ModeType::Webhook, Some(webhook)) => {
                if let Some(webhook) = validate_webhook(&at, &a.name, webhook, &mut errors) {
                    modes.push(Mode::Webhook(webhook));
                }
            }
            (_, Some(_)) => errors.push(format!(
                "{at}.webhook: Invalid value: \"non-null\": may only be specified when type=Webhook"
            )),
            (kind, None) => {
                let expected = kind.as_str().to_ascii_lowercase();
                if a.name != expected {
                    errors.push(format!(
                        "expected name {expected} for authorizer {} instead of {}",
                        kind.as_str(),
                        a.name
                    ));
                }
                modes.push(Mode::Fixed(kind));
            }
        }
    }
    if errors.is_empty() {
        Ok(modes)
    } else {
        Err(errors)
    }
}

/// One webhook's checks (the field paths are the authorizer's, as kube-apiserver writes
/// them); its mode when it passes them.
fn validate_webhook(
    at: &str,
    name: &str,
    webhook: &Webhook,
    errors: &mut Vec<String>,
) -> Option<WebhookMode> {
    let before = errors.len();
    let timeout = duration(at, "timeout", webhook.timeout.as_deref(), None, errors);
    if let Some(timeout) = timeout.filter(|t| *t > MAX_TIMEOUT) {
        errors.push(format!(
            "{at}.timeout: Invalid value: {:?}: must be > 0s and <= 30s",
            format!("{}s", timeout.as_secs_f64())
        ));
    }
    let authorized_ttl = duration(
        at,
        "authorizedTTL",
        webhook.authorized_ttl.as_deref(),
        Some(DEFAULT_AUTHORIZED_TTL),
        errors,
    );
    let unauthorized_ttl = duration(
        at,
        "unauthorizedTTL",
        webhook.unauthorized_ttl.as_deref(),
        Some(DEFAULT_UNAUTHORIZED_TTL),
        errors,
    );
    let version = match webhook.subject_access_review_version.as_str() {
        "" => {
            errors.push(format!("{at}.subjectAccessReviewVersion: Required value"));
            None
        }
        other => SarVersion::parse(other).or_else(|| {
            errors.push(format!(
                "{at}.subjectAccessReviewVersion: Unsupported value: {other:?}: supported values: \"v1\", \"v1beta1\""
            ));
            None
        }),
    };
    match webhook.match_condition_subject_access_review_version.as_str() {
        "" if !webhook.match_conditions.is_empty() => errors.push(format!(
            "{at}.matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified"
        )),
        "" | "v1" => {}
        other => errors.push(format!(
            "{at}.matchConditionSubjectAccessReviewVersion: Unsupported value: {other:?}: supported values: \"v1\""
        )),
    }
    let failure_policy = match webhook.failure_policy.as_str() {
        "" => {
            errors.push(format!("{at}.failurePolicy: Required value"));
            None
        }
        other => FailurePolicy::parse(other).or_else(|| {
            errors.push(format!(
                "{at}.failurePolicy: Unsupported value: {other:?}: supported values: \"NoOpinion\", \"Deny\""
            ));
            None
        }),
    };
    let kubeconfig = connection(at, &webhook.connection_info, errors);
    let match_conditions = match_conditions(at, &webhook.match_conditions, errors);
    if errors.len() != before {
        return None;
    }
    Some(WebhookMode {
        name: name.to_owned(),
        timeout: timeout?,
        authorized_ttl: authorized_ttl?,
        unauthorized_ttl: unauthorized_ttl?,
        version: version?,
        failure_policy: failure_policy?,
        kubeconfig: kubeconfig?,
        match_conditions,
    })
}

/// A duration field: required and positive; a missing or zero one is `default` when there is
/// one (the API's defaulting).
fn duration(
    at: &str,
    field: &str,
    text: Option<&str>,
    default: Option<Duration>,
    errors: &mut Vec<String>,
) -> Option<Duration> {
    let parsed = match text.map(parse_go_duration) {
        None => 0,
        Some(Ok(nanos)) => nanos,
        Some(Err(problem)) => {
            errors.push(format!(
                "{at}.{field}: Invalid value: {:?}: {problem}",
                text.unwrap_or_default()
            ));
            return None;
        }
    };
    if parsed < 0 {
        let bound = if field == "timeout" {
            "must be > 0s and <= 30s"
        } else {
            "must be > 0s"
        };
        errors.push(format!(
            "{at}.{field}: Invalid value: {:?}: {bound}",
            text.unwrap_or_default()
        ));
        return None;
    }
    match (u64::try_from(parsed).ok().filter(|n| *n > 0), default) {
        (Some(nanos), _) => Some(Duration::from_nanos(nanos)),
        (None, Some(default)) => Some(default),
        (None, None) => {
            errors.push(format!("{at}.{field}: Required value"));
            None
        }
    }
}

/// `connectionInfo`: a kubeconfig file at an absolute path that is a regular file.
/// `InClusterConfig` is valid in Kubernetes but refused here: the API server has no
/// in-cluster service account of its own to call a webhook with.
fn connection(at: &str, info: &ConnectionInfo, errors: &mut Vec<String>) -> Option<PathBuf> {
    let field = format!("{at}.connectionInfo");
    match info.kind.as_str() {
        "" => errors.push(format!("{field}.type: Required value")),
        "InClusterConfig" => {
            if let Some(file) = &info.kube_config_file {
                errors.push(format!(
                    "{field}.kubeConfigFile: Invalid value: {file:?}: can only be set when type=KubeConfigFile"
                ));
            } else {
                errors.push(format!(
                    "{field}.type: Unsupported value: \"InClusterConfig\": this API server has no in-cluster configuration; supported values: \"KubeConfigFile\""
                ));
            }
        }
        "KubeConfigFile" => match info.kube_config_file.as_deref() {
            None | Some("") => errors.push(format!("{field}.kubeConfigFile: Required value")),
            Some(file) if !Path::new(file).is_absolute() => errors.push(format!(
                "{field}.kubeConfigFile: Invalid value: {file:?}: must be an absolute path"
            )),
            Some(file) => match std::fs::metadata(file) {
                Err(e) => errors.push(format!(
                    "{field}.kubeConfigFile: Invalid value: {file:?}: error loading file: {e}"
                )),
                Ok(meta) if !meta.is_file() => errors.push(format!(
                    "{field}.kubeConfigFile: Invalid value: {file:?}: must be a regular file"
                )),
                Ok(_) => return Some(PathBuf::from(file)),
            },
        },
        other => errors.push(format!(
            "{field}.type: Unsupported value: {other:?}: supported values: \"InClusterConfig\", \"KubeConfigFile\""
        )),
    }
    None
}

/// At most [`MAX_MATCH_CONDITIONS`] expressions, each present, not repeated and compiling
/// over [`REQUEST_VARIABLE`]; their sources when all pass.
fn match_conditions(
    at: &str,
    conditions: &[MatchCondition],
    errors: &mut Vec<String>,
) -> Vec<String> {
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errors.push(format!(
            "{at}.matchConditions: Too many: {}: must have at most {MAX_MATCH_CONDITIONS} items",
            conditions.len()
        ));
        return Vec::new();
    }
    let mut seen = BTreeSet::new();
    for (i, condition) in conditions.iter().enumerate() {
        let field = format!("{at}.matchConditions[{i}].expression");
        let expression = condition.expression.as_str();
        if expression.trim().is_empty() {
            errors.push(format!("{field}: Required value"));
        } else if !seen.insert(expression) {
            errors.push(format!("{field}: Duplicate value: {expression:?}"));
        } else if let Err(e) = Program::compile(expression, &[REQUEST_VARIABLE]) {
            errors.push(format!("{field}: Invalid value: {expression:?}: {e}"));
        }
    }
    conditions.iter().map(|c| c.expression.clone()).collect()
}

/// A Go duration (`300ms`, `1.5s`, `2h45m`, `-1s`), in nanoseconds.
fn parse_go_duration(text: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {text:?}");
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("time: missing unit in duration {text:?}"))?;
        let (number, tail) = rest.split_at(number_end);
        let value: f64 = number.parse().map_err(|_| invalid())?;
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(format!("time: unknown unit {unit:?} in duration {text:?}")),
        };
        total += value * scale;
        rest = tail;
    }
    #[allow(
        clippy::cast_possible_truncation,
        reason = "a configured timeout or TTL is far below i128's range"
    )]
    let nanos = total.round() as i128;
    Ok(if negative { -nanos } else { nanos })
}

#[cfg(test)]
#[path = "file_test.rs"]
mod tests;
