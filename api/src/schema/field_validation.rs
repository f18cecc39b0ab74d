//! The `fieldValidation` level of a create or update (R-RES-185..187) and what it makes of the
//! walker's findings: nothing, warnings, or one 400 listing them all.

use super::Finding;

/// How unknown and duplicate fields are answered (`metav1.FieldValidation*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Dropped silently (R-RES-185).
    Ignore,
    /// Dropped, with one `Warning` per field (R-RES-186); the default.
    #[default]
    Warn,
    /// The request fails with 400 listing every one (R-RES-187).
    Strict,
}

/// The values `fieldValidation` may hold, as Kubernetes lists them in its 422 (the empty
/// value means the default).
pub const FIELD_VALIDATION_VALUES: [&str; 4] = ["", "Ignore", "Strict", "Warn"];

/// A strict decode found unknown or duplicate fields: every one the decoder kept (at most
/// [`MAX_FINDINGS`](super::MAX_FINDINGS), each path an excerpt), in body order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("strict decoding error: {}", list(.0))]
pub struct StrictDecodingError(pub Vec<Finding>);

/// A `fieldValidation` value that names no level; it holds the value as sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported fieldValidation {0:?}")]
pub struct UnsupportedLevel(pub String);

/// The findings as Kubernetes lists them in a strict error: the YAML duplicates as one
/// `yaml: unmarshal errors:` entry with a line each, then the others, comma-separated.
fn list(findings: &[Finding]) -> String {
    let (yaml, json): (Vec<&Finding>, Vec<&Finding>) = findings
        .iter()
        .partition(|f| matches!(f, Finding::YamlDuplicate { .. }));
    let mut parts = Vec::with_capacity(json.len() + 1);
    if !yaml.is_empty() {
        let lines: Vec<String> = yaml.iter().map(|f| format!("\n  {f}")).collect();
        parts.push(format!("yaml: unmarshal errors:{}", lines.concat()));
    }
    parts.extend(json.iter().map(|f| f.to_string()));
    parts.join(", ")
}

impl FieldValidation {
    /// The level a query value names (`None`: absent or empty, the default); `Err` for any
    /// other value (case matters, as in Kubernetes).
    pub fn parse(value: Option<&str>) -> Result<Self, UnsupportedLevel> {
        match value.unwrap_or_default() {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(UnsupportedLevel(other.to_owned())),
        }
    }

    /// The warnings to answer for `findings`, or the error that fails the request.
    pub fn judge(self, findings: Vec<Finding>) -> Result<Vec<String>, StrictDecodingError> {
        match self {
            Self::Ignore => Ok(Vec::new()),
            Self::Warn => Ok(findings.iter().map(Finding::to_string).collect()),
            Self::Strict if findings.is_empty() => Ok(Vec::new()),
            Self::Strict => Err(StrictDecodingError(findings)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings() -> Vec<Finding> {
        vec![
            Finding::Unknown("spec.foo".into()),
            Finding::Duplicate("metadata.name".into()),
        ]
    }

    // R-RES-185, R-RES-186, R-RES-187
    #[test]
    fn each_level_answers_findings_its_way() {
        assert_eq!(FieldValidation::Ignore.judge(findings()), Ok(vec![]));
        assert_eq!(
            FieldValidation::Warn.judge(findings()),
            Ok(vec![
                "unknown field \"spec.foo\"".to_owned(),
                "duplicate field \"metadata.name\"".to_owned()
            ])
        );
        let strict = FieldValidation::Strict
            .judge(findings())
            .expect_err("fails");
        assert_eq!(
            strict.to_string(),
            "strict decoding error: unknown field \"spec.foo\", duplicate field \"metadata.name\""
        );
        assert_eq!(FieldValidation::Strict.judge(vec![]), Ok(vec![]));
    }

    // R-RES-187, R-RES-189: YAML duplicates come first, as one entry with a line each.
    #[test]
    fn strict_yaml_duplicates_are_one_entry() {
        let dup = |line, key: &str| Finding::YamlDuplicate {
            line,
            key: key.into(),
        };
        let strict = FieldValidation::Strict
            .judge(vec![
                dup(5, "name"),
                dup(14, "paused"),
                Finding::Unknown("spec.unknown1".into()),
            ])
            .expect_err("fails");
        assert_eq!(
            strict.to_string(),
            "strict decoding error: yaml: unmarshal errors:\n  line 5: key \"name\" already set in map\n  line 14: key \"paused\" already set in map, unknown field \"spec.unknown1\""
        );
        assert_eq!(
            FieldValidation::Warn.judge(vec![dup(5, "name")]),
            Ok(vec!["line 5: key \"name\" already set in map".to_owned()])
        );
    }

    #[test]
    fn parses_the_three_levels_and_defaults_to_warn() {
        assert_eq!(FieldValidation::parse(None), Ok(FieldValidation::Warn));
        assert_eq!(FieldValidation::parse(Some("")), Ok(FieldValidation::Warn));
        assert_eq!(
            FieldValidation::parse(Some("Ignore")),
            Ok(FieldValidation::Ignore)
        );
        assert_eq!(
            FieldValidation::parse(Some("Strict")),
            Ok(FieldValidation::Strict)
        );
        assert_eq!(
            FieldValidation::parse(Some("strict")),
            Err(UnsupportedLevel("strict".into()))
        );
    }
}
