//! The query options of a create, update or patch (`CreateOptions`, `UpdateOptions`,
//! `PatchOptions`) that the store acts on, validated as Kubernetes does before the body is
//! read (422 with `details.kind` naming the options kind): `dryRun` (R-RES-051, R-RES-192; its
//! check is shared with `DeleteOptions`) and `fieldValidation` (R-RES-185..187).

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::registry::WriteOptions;
use crate::request::QueryParams;
use crate::schema::FIELD_VALIDATION_VALUES;
use crate::schema::FieldValidation;
use crate::schema::UnsupportedLevel;
use crate::validation::FieldError;

/// The values `dryRun` may hold (`metav1.DryRunAll`).
const DRY_RUN_VALUES: [&str; 1] = ["All"];

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
    /// A PATCH: `PatchOptions`.
    Patch,
}

impl WriteKind {
    fn options_kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Patch => "PatchOptions",
        }
    }
}

/// Reads and validates the options of a create or update from its query.
pub(crate) fn write_options(
    query: &QueryParams,
    kind: WriteKind,
    flavor: Flavor,
) -> Result<WriteOptions, ApiError> {
    let dry_run: Vec<String> = query.get_all("dryRun").map(str::to_owned).collect();
    let mut causes: Vec<FieldError> = dry_run_error(&dry_run).into_iter().collect();
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
    Ok(WriteOptions {
        dry_run: !dry_run.is_empty(),
        field_validation,
        ..WriteOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(query: &str, kind: WriteKind, flavor: Flavor) -> Result<WriteOptions, ApiError> {
        write_options(&QueryParams::parse(Some(query)), kind, flavor)
    }

    // R-RES-192
    #[test]
    fn dry_run_all_asks_for_a_dry_run() {
        for kind in [WriteKind::Create, WriteKind::Update, WriteKind::Patch] {
            assert_eq!(
                opts("", kind, Flavor::Kubernetes).expect("none"),
                WriteOptions::default()
            );
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
        for kind in [WriteKind::Create, WriteKind::Update, WriteKind::Patch] {
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
            (WriteKind::Patch, "PatchOptions"),
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
