//! One webhook of a configuration, read once per stored version of its configuration: its
//! address, rules, selectors, policies and compiled `matchConditions`.

use std::time::Duration;

use serde_json::Value;

use crate::admission::matching::Rule;
use crate::admission::matching::Selectors;
use crate::cel::Program;
use crate::registry::builtin::ADMISSION_REVIEW_VERSIONS;
use crate::registry::builtin::MATCH_CONDITION_VARIABLES;
use crate::webhook::ClientConfig;

/// The longest `timeoutSeconds` honoured.
const MAX_TIMEOUT_SECONDS: u64 = 30;
/// `timeoutSeconds` when unset.
const DEFAULT_TIMEOUT_SECONDS: u64 = 10;

/// What a webhook does besides answering (`sideEffects`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideEffects {
    /// `None`: nothing.
    None,
    /// `NoneOnDryRun`: nothing when the review says `dryRun`.
    NoneOnDryRun,
    /// `Some`, `Unknown`, or unset (v1beta1 objects): a dry run may not call it.
    Some,
}

/// One `matchConditions` entry, compiled.
#[derive(Debug)]
pub struct MatchCondition {
    /// Its name.
    pub name: String,
    /// The expression, or why it does not compile.
    pub program: Result<Program, String>,
}

/// One webhook, as the dispatchers use it.
#[derive(Debug)]
pub struct Webhook {
    /// Its `name` (what messages and audit annotations name).
    pub name: String,
    /// Which webhook this is across a request's passes: `<configuration>/<index>`.
    pub uid: String,
    /// Where it is, or why its `clientConfig` cannot be used.
    pub client: Result<ClientConfig, String>,
    /// Its `rules`, compiled.
    pub rules: Vec<Rule>,
    /// `matchPolicy: Exact` (the default, Equivalent, is `false`).
    pub exact: bool,
    /// Its `namespaceSelector` and `objectSelector`.
    pub selectors: Selectors,
    /// Its `sideEffects`.
    pub side_effects: SideEffects,
    /// Its `timeoutSeconds`, at most 30.
    pub timeout: Duration,
    /// The first of its `admissionReviewVersions` this server speaks; `None`: none is.
    pub review_version: Option<&'static str>,
    /// `failurePolicy: Ignore`: a failed call lets the write pass.
    pub fail_open: bool,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke_if_needed: bool,
    /// Its `matchConditions`, compiled.
    pub conditions: Vec<MatchCondition>,
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

impl Webhook {
    /// The webhook at `index` of configuration `configuration`, from its stored form (v1
    /// defaults filled in for anything unset).
    pub fn parse(configuration: &str, index: usize, hook: &Value) -> Self {
        let timeout = hook
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
            .clamp(1, MAX_TIMEOUT_SECONDS);
        let versions = hook
            .get("admissionReviewVersions")
            .and_then(Value::as_array);
        let review_version = (versions.into_iter().flatten())
            .filter_map(Value::as_str)
            .find_map(|v| ADMISSION_REVIEW_VERSIONS.iter().copied().find(|s| *s == v));
        let conditions = (hook.get("matchConditions").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .map(|c| MatchCondition {
                name: text(c, "name").unwrap_or_default().to_owned(),
                program: Program::compile(
                    text(c, "expression").unwrap_or_default(),
                    MATCH_CONDITION_VARIABLES,
                )
                .map_err(|e| e.to_string()),
            })
            .collect();
        Self {
            name: text(hook, "name").unwrap_or_default().to_owned(),
            uid: format!("{configuration}/{index}"),
            client: ClientConfig::from_value(hook.get("clientConfig").unwrap_or(&Value::Null)),
            rules: (hook
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten())
            .map(Rule::from_value)
            .collect(),
            exact: text(hook, "matchPolicy") == Some("Exact"),
            selectors: Selectors::from_value(hook),
            side_effects: match text(hook, "sideEffects") {
                Some("None") => SideEffects::None,
                Some("NoneOnDryRun") => SideEffects::NoneOnDryRun,
                _ => SideEffects::Some,
            },
            timeout: Duration::from_secs(timeout),
            review_version,
            fail_open: text(hook, "failurePolicy") == Some("Ignore"),
            reinvoke_if_needed: text(hook, "reinvocationPolicy") == Some("IfNeeded"),
            conditions,
        }
    }
}
