//! The query options of a create, update or patch (`CreateOptions`, `UpdateOptions`,
//! `PatchOptions`) that the store acts on, validated as Kubernetes does before the body is
//! read (422 with `details.kind` naming the options kind): `force` and `fieldManager`
//! (R-RES-201; Kubernetes' `ValidatePatchOptions`), `dryRun` (R-RES-051, R-RES-192; its check
//! is shared with `DeleteOptions`) and `fieldValidation` (R-RES-185..187). The write's field
//! manager is `fieldManager`, else the leading token of the `User-Agent` (R-RES-212).

use chrono::DateTime;
use chrono::Utc;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::patch::PatchType;
use crate::registry::WriteManager;
use crate::registry::WriteOptions;
use crate::request::QueryParams;
use crate::schema::FIELD_VALIDATION_VALUES;
use crate::schema::FieldValidation;
use crate::schema::UnsupportedLevel;
use crate::validation::FieldError;

/// The values `dryRun` may hold (`metav1.DryRunAll`).
const DRY_RUN_VALUES: [&str; 1] = ["All"];

/// The most bytes a field manager's name may have (Kubernetes' `FieldManagerMaxLength`).
const FIELD_MANAGER_MAX_BYTES: usize = 128;

/// Whether `c` is printable as Go's `unicode.IsPrint` judges it: no control or format
/// character, and no space but the ASCII one.
fn printable(c: char) -> bool {
    c == ' ' || !(c.is_control() || c.is_whitespace() || ('\u{200b}'..='\u{200f}').contains(&c))
}

/// The manager a `User-Agent` names (Kubernetes' `prefixFromUserAgent`): the text before the
/// first `/`, without unprintable characters, cut to [`FIELD_MANAGER_MAX_BYTES`].
fn prefix_from_user_agent(agent: &str) -> String {
    let mut prefix = String::new();
    let lead = agent.split('/').next().unwrap_or_default();
    for c in lead.chars().filter(|c| printable(*c)) {
        if prefix.len() + c.len_utf8() > FIELD_MANAGER_MAX_BYTES {
            break;
        }
        prefix.push(c);
    }
    prefix
}

/// The causes refusing `manager` as a field manager (Kubernetes' `ValidateFieldManager`).
fn field_manager_errors(manager: &str) -> Vec<FieldError> {
    let mut causes = Vec::new();
    if manager.len() > FIELD_MANAGER_MAX_BYTES {
        causes.push(FieldError::too_long(
            "fieldManager",
            FIELD_MANAGER_MAX_BYTES,
        ));
    }
    for (at, c) in manager.char_indices().filter(|(_, c)| !printable(*c)) {
        causes.push(FieldError::invalid(
            "fieldManager",
            manager,
            format!(
                "invalid character U+{:04X} (at position {at})",
                u32::from(c)
            ),
        ));
    }
    causes
}

/// Who sends a write: what its field manager is inferred from when `fieldManager` is unset.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sender<'a> {
    /// The `User-Agent` header, if sent.
    pub user_agent: Option<&'a str>,
    /// The time of the request.
    pub now: DateTime<Utc>,
}

/// The cause refusing `dry_run` when it holds anything but `All` (R-RES-051); an empty value
/// is refused too, as Kubernetes does.
pub(crate) fn dry_run_error(dry_run: &[String]) -> Option<FieldError> {
    dry_run
        .iter()
        .any(|d| !DRY_RUN_VALUES.contains(&d.as_str()))
        .then(|| FieldError::not_supported("dryRun", dry_run.to_vec(), &DRY_RUN_VALUES))
}

/// Which options a write's query carries: the `kind` its 422 names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// A POST: `CreateOptions`.
    Create,
    /// A PUT: `UpdateOptions`.
    Update,
    /// A PATCH of this type: `PatchOptions`.
    Patch(PatchType),
}

impl WriteKind {
    fn options_kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Patch(_) => "PatchOptions",
        }
    }
}

/// `force` as sent: `None` when absent; 400 for a value that is no boolean, as Kubernetes'
/// parameter decoding answers it.
fn force_option(query: &QueryParams) -> Result<Option<bool>, ApiError> {
    let Some(value) = query.get("force") else {
        return Ok(None);
    };
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(Some(true)),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(Some(false)),
        other => Err(ApiError::BadRequest(format!(
            "strconv.ParseBool: parsing {other:?}: invalid syntax"
        ))),
    }
}

/// Reads and validates the options of a create, update or patch from its query; the write's
/// manager is `fieldManager`, else the leading token of `sender`'s `User-Agent`.
pub(crate) fn write_options(
    query: &QueryParams,
    kind: WriteKind,
    flavor: Flavor,
    sender: Sender<'_>,
) -> Result<WriteOptions, ApiError> {
    let field_manager = query.get("fieldManager").unwrap_or_default();
    let force = match kind {
        WriteKind::Patch(_) => force_option(query)?,
        WriteKind::Create | WriteKind::Update => None,
    };
    let mut causes = Vec::new();
    match kind {
        WriteKind::Patch(PatchType::Apply) if field_manager.is_empty() => causes.push(
            FieldError::required("fieldManager", "is required for apply patch"),
        ),
        WriteKind::Patch(PatchType::Apply) => {}
        WriteKind::Patch(_) if force.is_some() => causes.push(FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        )),
        _ => {}
    }
    causes.extend(field_manager_errors(field_manager));
    let dry_run: Vec<String> = query.get_all("dryRun").map(str::to_owned).collect();
    causes.extend(dry_run_error(&dry_run));
    let field_validation = match FieldValidation::parse(query.get("fieldValidation")) {
        Ok(level) => level,
        Err(UnsupportedLevel(value)) => {
            causes.push(FieldError::not_supported(
                "fieldValidation",
                value,
                &FIELD_VALIDATION_VALUES,
            ));
            FieldValidation::default()
        }
    };
    if !causes.is_empty() {
        return Err(ApiError::Invalid {
            kind: GroupKind {
                group: flavor.meta_group(),
                kind: kind.options_kind().to_owned(),
            },
            name: String::new(),
            causes,
        });
    }
    let name = match field_manager {
        "" => sender
            .user_agent
            .map(prefix_from_user_agent)
            .unwrap_or_default(),
        manager => manager.to_owned(),
    };
    Ok(WriteOptions {
        dry_run: !dry_run.is_empty(),
        field_validation,
        manager: Some(WriteManager {
            name,
            now: sender.now,
        }),
        force: force == Some(true),
        ..WriteOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MERGE: WriteKind = WriteKind::Patch(PatchType::Merge);
    const APPLY: WriteKind = WriteKind::Patch(PatchType::Apply);

    fn sent_by(agent: Option<&str>) -> Sender<'_> {
        Sender {
            user_agent: agent,
            now: DateTime::UNIX_EPOCH,
        }
    }

    fn opts(query: &str, kind: WriteKind, flavor: Flavor) -> Result<WriteOptions, ApiError> {
        write_options(
            &QueryParams::parse(Some(query)),
            kind,
            flavor,
            sent_by(None),
        )
    }

    /// The causes of the 422 `query` gets as options of `kind`, as `field: detail` texts.
    fn refused(query: &str, kind: WriteKind) -> Vec<String> {
        match opts(query, kind, Flavor::Kubernetes) {
            Err(ApiError::Invalid { causes, .. }) => {
                causes.iter().map(ToString::to_string).collect()
            }
            other => panic!("{query}: {other:?}"),
        }
    }

    // R-RES-201, and Kubernetes' `ValidatePatchOptions`: `force` only on an apply.
    #[test]
    fn apply_needs_a_field_manager_and_only_apply_may_force() {
        assert_eq!(
            refused("", APPLY),
            ["fieldManager: Required value: is required for apply patch"]
        );
        assert_eq!(
            refused("force=true&fieldManager=m", MERGE),
            ["force: Forbidden: may not be specified for non-apply patch"]
        );
        assert_eq!(
            refused("force=false", WriteKind::Patch(PatchType::Json)).len(),
            1
        );
        let forced = opts("fieldManager=m&force=true", APPLY, Flavor::Platform).expect("ok");
        assert!(forced.force);
        assert!(
            !opts("fieldManager=m&force=false", APPLY, Flavor::Platform)
                .expect("ok")
                .force
        );
        // Create and update options have no `force`: it is not read.
        assert!(
            !opts("force=true", WriteKind::Update, Flavor::Platform)
                .expect("ok")
                .force
        );
        assert!(matches!(
            opts("fieldManager=m&force=yes", APPLY, Flavor::Platform),
            Err(ApiError::BadRequest(m)) if m.contains("invalid syntax")
        ));
    }

    // Kubernetes' `ValidateFieldManager`: at most 128 bytes, every character printable.
    #[test]
    fn field_managers_are_short_and_printable() {
        let long = "m".repeat(129);
        for kind in [WriteKind::Create, WriteKind::Update, MERGE, APPLY] {
            assert_eq!(
                refused(&format!("fieldManager={long}"), kind),
                ["fieldManager: Too long: may not be more than 128 bytes"]
            );
            let bad = refused("fieldManager=a%07b", kind);
            assert_eq!(bad.len(), 1, "{bad:?}");
            assert!(
                bad[0].starts_with("fieldManager: Invalid value: ")
                    && bad[0].ends_with(": invalid character U+0007 (at position 1)"),
                "{bad:?}"
            );
        }
        let at_limit = "m".repeat(128);
        let ok = opts(
            &format!("fieldManager={at_limit}"),
            APPLY,
            Flavor::Kubernetes,
        );
        assert_eq!(
            ok.expect("128 bytes").manager.expect("manager").name,
            at_limit
        );
    }

    // R-RES-212: without `fieldManager`, the manager is the User-Agent's text before its
    // first `/`, without unprintable characters, at most 128 bytes.
    #[test]
    fn the_user_agent_names_the_manager_when_field_manager_is_unset() {
        let name = |query: &str, agent: Option<&str>| {
            let q = QueryParams::parse(Some(query));
            write_options(&q, WriteKind::Update, Flavor::Kubernetes, sent_by(agent))
                .expect("valid")
                .manager
                .expect("a request's write has a manager")
                .name
        };
        assert_eq!(
            name("", Some("kubectl/v1.31.0 (linux/amd64) kubernetes/abc")),
            "kubectl"
        );
        assert_eq!(name("", Some("Go-http-client/1.1")), "Go-http-client");
        assert_eq!(name("", Some("plain agent")), "plain agent");
        assert_eq!(name("", Some("a\tb/1")), "ab");
        assert_eq!(name("", Some(&"x".repeat(200))), "x".repeat(128));
        assert_eq!(name("", None), "");
        assert_eq!(name("fieldManager=mine", Some("kubectl/v1")), "mine");
    }

    // R-RES-192
    #[test]
    fn dry_run_all_asks_for_a_dry_run() {
        for kind in [WriteKind::Create, WriteKind::Update, MERGE] {
            assert!(!opts("", kind, Flavor::Kubernetes).expect("none").dry_run);
            assert!(
                opts("dryRun=All", kind, Flavor::Kubernetes)
                    .expect("all")
                    .dry_run
            );
            assert!(
                opts("dryRun=All&dryRun=All&pretty=true", kind, Flavor::Platform)
                    .expect("repeated")
                    .dry_run
            );
        }
    }

    // R-RES-185, R-RES-186, R-RES-187
    #[test]
    fn field_validation_names_the_level() {
        for kind in [WriteKind::Create, WriteKind::Update, MERGE] {
            for (query, level) in [
                ("", FieldValidation::Warn),
                ("fieldValidation=", FieldValidation::Warn),
                ("fieldValidation=Warn", FieldValidation::Warn),
                ("fieldValidation=Ignore", FieldValidation::Ignore),
                ("fieldValidation=Strict&dryRun=All", FieldValidation::Strict),
            ] {
                let o = opts(query, kind, Flavor::Platform).expect(query);
                assert_eq!(o.field_validation, level, "{query}");
            }
        }
    }

    // Kubernetes' `ValidateFieldValidation`: any other value is a 422 on the options kind,
    // listing the values it supports; a bad `dryRun` is reported beside it.
    #[test]
    fn other_field_validation_values_are_422() {
        match opts(
            "fieldValidation=strict&dryRun=Bogus",
            WriteKind::Create,
            Flavor::Kubernetes,
        ) {
            Err(ApiError::Invalid { kind, causes, .. }) => {
                assert_eq!(kind.kind, "CreateOptions");
                let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
                assert_eq!(fields, ["dryRun", "fieldValidation"]);
                assert_eq!(
                    causes[1].to_string(),
                    r#"fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn""#
                );
            }
            other => panic!("{other:?}"),
        }
    }

    // R-RES-051
    #[test]
    fn other_dry_run_values_are_422_on_the_options_kind() {
        for (kind, name) in [
            (WriteKind::Create, "CreateOptions"),
            (WriteKind::Update, "UpdateOptions"),
            (MERGE, "PatchOptions"),
        ] {
            for (flavor, group) in [
                (Flavor::Kubernetes, "meta.k8s.io"),
                (Flavor::Platform, "meta.platform.io"),
            ] {
                for query in ["dryRun=Bogus", "dryRun=", "dryRun=All&dryRun=all"] {
                    match opts(query, kind, flavor) {
                        Err(ApiError::Invalid {
                            kind: gk, causes, ..
                        }) => {
                            assert_eq!((gk.group.as_str(), gk.kind.as_str()), (group, name));
                            assert_eq!(causes.len(), 1);
                            assert_eq!(causes[0].field, "dryRun", "{query}");
                        }
                        other => panic!("{query}: {other:?}"),
                    }
                }
            }
        }
    }
}
