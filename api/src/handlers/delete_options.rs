//! `DeleteOptions` of a delete, from the body or the query (R-RES-048..055), decoded into the
//! store's [`DeleteOptions`] with Kubernetes' validation (422 with
//! `details.kind: DeleteOptions`). `gracePeriodSeconds` is decoded as Kubernetes decodes it (a
//! 64-bit integer, 400 otherwise).

// Request input is parsed here: every step of arithmetic on it is checked or saturating
// (tests are exempt).
#![cfg_attr(
    not(test),
    warn(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )
)]

use serde_json::Value;

use super::write_options::dry_run_error;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::error::excerpt_json;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::registry::DeleteOptions;
use crate::registry::Preconditions;
use crate::registry::PropagationPolicy;
use crate::request::QueryParams;
use crate::validation::FieldError;

const GRACE_PERIOD: &str = "gracePeriodSeconds";

const IGNORE_READ_ERRORS: &str = "ignoreStoreReadErrorWithClusterBreakingPotential";

fn string_field(options: &Value, path: &[&str]) -> Result<Option<String>, ApiError> {
    let mut v = options;
    for p in path {
        match v.get(p) {
            Some(next) => v = next,
            None => return Ok(None),
        }
    }
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(ApiError::BadRequest(format!(
            "invalid DeleteOptions: {} must be a string, not {}",
            path.join("."),
            excerpt_json(other)
        ))),
    }
}

/// `gracePeriodSeconds` of the body (`Null` when absent) or, without a body, of the query: a
/// 64-bit integer (`-0` is 0) or nothing; anything else is a 400.
fn grace_period(
    body: &Value,
    query: &QueryParams,
    from_body: bool,
) -> Result<Option<i64>, ApiError> {
    let valid = if from_body {
        match body.get(GRACE_PERIOD) {
            None | Some(Value::Null) => Some(None),
            Some(Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Some(0)),
            Some(Value::Number(n)) => n.as_i64().map(Some),
            Some(_) => None,
        }
    } else {
        match query.get(GRACE_PERIOD) {
            None | Some("") => Some(None),
            Some(v) => v.parse::<i64>().ok().map(Some),
        }
    };
    if let Some(valid) = valid {
        return Ok(valid);
    }
    let given = if from_body {
        body.get(GRACE_PERIOD).map(excerpt_json).unwrap_or_default()
    } else {
        format!("{:?}", excerpt(query.get(GRACE_PERIOD).unwrap_or_default()))
    };
    Err(ApiError::BadRequest(format!(
        "invalid DeleteOptions: {GRACE_PERIOD} must be a 64-bit integer, not {given}"
    )))
}

/// `ignoreStoreReadErrorWithClusterBreakingPotential` of the body or, without a body, of the
/// query: a boolean, `false` when absent (R-RES-048).
fn ignore_read_errors(
    body: &Value,
    query: &QueryParams,
    from_body: bool,
) -> Result<bool, ApiError> {
    if !from_body {
        return Ok(query.get(IGNORE_READ_ERRORS).is_some_and(|v| v == "true"));
    }
    match body.get(IGNORE_READ_ERRORS) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ApiError::BadRequest(format!(
            "invalid DeleteOptions: {IGNORE_READ_ERRORS} must be a boolean, not {}",
            excerpt_json(other)
        ))),
    }
}

/// Reads and validates the options: the body when it has one, else the query parameters.
pub(crate) fn delete_options(
    body: &[u8],
    query: &QueryParams,
    flavor: Flavor,
) -> Result<DeleteOptions, ApiError> {
    let from_body = !body.iter().all(u8::is_ascii_whitespace);
    let (options, dry_run, propagation, orphan) = if from_body {
        let options: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::BadRequest(format!("invalid DeleteOptions: {e}")))?;
        let dry_run: Vec<String> = match options.get("dryRun") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
                ApiError::BadRequest(format!(
                    "invalid DeleteOptions: dryRun: {}",
                    excerpt(&e.to_string())
                ))
            })?,
        };
        let propagation = string_field(&options, &["propagationPolicy"])?;
        let orphan = match options.get("orphanDependents") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(ApiError::BadRequest(format!(
                    "invalid DeleteOptions: orphanDependents must be a boolean, not {}",
                    excerpt_json(other)
                )));
            }
        };
        (options, dry_run, propagation, orphan)
    } else {
        let dry_run = query.get_all("dryRun").map(str::to_owned).collect();
        let propagation = query.get("propagationPolicy").map(str::to_owned);
        let orphan = query.get("orphanDependents").map(|v| v == "true");
        (Value::Null, dry_run, propagation, orphan)
    };
    let grace_period_seconds = grace_period(&options, query, from_body)?;
    let ignore_store_read_errors = ignore_read_errors(&options, query, from_body)?;
    let mut errs = Vec::new();
    if let Some(p) = &propagation {
        if orphan.is_some() {
            errs.push(FieldError::invalid(
                "propagationPolicy",
                p.as_str(),
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        if PropagationPolicy::parse(p).is_none() {
            let names = PropagationPolicy::ALL.map(|(name, _)| name);
            errs.push(FieldError::not_supported(
                "propagationPolicy",
                p.as_str(),
                &names,
            ));
        }
    }
    errs.extend(dry_run_error(&dry_run));
    if !errs.is_empty() {
        return Err(ApiError::Invalid {
            kind: GroupKind {
                group: flavor.meta_group(),
                kind: "DeleteOptions".to_owned(),
            },
            name: String::new(),
            causes: errs,
        });
    }
    Ok(DeleteOptions {
        preconditions: Preconditions {
            uid: string_field(&options, &["preconditions", "uid"])?,
            resource_version: string_field(&options, &["preconditions", "resourceVersion"])?,
        },
        dry_run: !dry_run.is_empty(),
        grace_period_seconds,
        propagation_policy: propagation.as_deref().and_then(PropagationPolicy::parse),
        orphan_dependents: orphan,
        ignore_store_read_errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(body: &str, query: &str) -> Result<DeleteOptions, ApiError> {
        delete_options(
            body.as_bytes(),
            &QueryParams::parse(Some(query)),
            Flavor::Kubernetes,
        )
    }

    // R-RES-049, R-RES-050, R-RES-055
    #[test]
    fn preconditions_and_dry_run_from_body_or_query() {
        assert_eq!(opts("", "").expect("empty"), DeleteOptions::default());
        let p = opts(r#"{"kind":"DeleteOptions","preconditions":{"uid":"u","resourceVersion":"7"},"propagationPolicy":"Background"}"#, "")
            .expect("parses");
        assert_eq!(p.preconditions.uid.as_deref(), Some("u"));
        assert_eq!(p.preconditions.resource_version.as_deref(), Some("7"));
        assert!(opts(r#"{"dryRun":["All"]}"#, "").expect("dry run").dry_run);
        assert!(
            opts("", "dryRun=All&propagationPolicy=Orphan")
                .expect("query")
                .dry_run
        );
        assert!(matches!(opts("{", ""), Err(ApiError::BadRequest(_))));
        assert!(matches!(
            opts(r#"{"preconditions":{"uid":1}}"#, ""),
            Err(ApiError::BadRequest(_))
        ));
    }

    // R-RES-051, R-RES-053, R-RES-054
    #[test]
    fn invalid_options_are_422_on_delete_options() {
        for (body, query, field) in [
            (r#"{"dryRun":["Bogus"]}"#, "", "dryRun"),
            ("", "dryRun=Bogus", "dryRun"),
            (
                r#"{"propagationPolicy":"Sideways"}"#,
                "",
                "propagationPolicy",
            ),
            (
                r#"{"propagationPolicy":"Orphan","orphanDependents":true}"#,
                "",
                "propagationPolicy",
            ),
            (
                "",
                "propagationPolicy=Orphan&orphanDependents=false",
                "propagationPolicy",
            ),
        ] {
            match opts(body, query) {
                Err(ApiError::Invalid { kind, causes, .. }) => {
                    assert_eq!(kind.kind, "DeleteOptions");
                    assert_eq!(kind.group, "meta.k8s.io");
                    assert_eq!(causes[0].field, field, "{body} {query}");
                }
                other => panic!("{body} {query}: {other:?}"),
            }
        }
    }
}
