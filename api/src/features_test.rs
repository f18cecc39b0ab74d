//! Unit tests of the feature gate table and its stage rules.

use super::*;

fn parse(values: &[&str]) -> Result<(FeatureGates, Vec<GateWarning>), FeatureGateError> {
    FeatureGates::parse(values.iter().copied())
}

fn gate(stage: Stage, default: bool) -> Gate {
    Gate {
        name: "Example",
        feature: None,
        stage,
        default,
        cluster_wide: false,
    }
}

#[test]
fn every_feature_has_exactly_one_row_and_rows_are_sorted() {
    let features: Vec<Feature> = GATES.iter().filter_map(|g| g.feature).collect();
    assert_eq!(features.len(), Feature::COUNT);
    for (i, feature) in features.iter().enumerate() {
        assert_eq!(feature.index(), i, "{feature:?} out of order");
    }
    let names: Vec<&str> = GATES.iter().map(|g| g.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    for row in GATES {
        assert_eq!(
            row.feature.is_none(),
            row.stage == Stage::Removed || row.toggles().is_some(),
            "{}",
            row.name
        );
    }
}

// R-VER-086 R-VER-087
#[test]
fn defaults_follow_the_stages_the_spec_names() {
    let gates = FeatureGates::default();
    assert!(gates.enabled(Feature::APIResponseCompression));
    assert!(gates.enabled(Feature::WatchList));
    assert!(!gates.enabled(Feature::CBORServingAndStorage));
    assert!(!gates.enabled(Feature::AllowUnsafeMalformedObjectDeletion));
    assert!(gates.enabled(Feature::AuthorizeWithSelectors));
    assert!(gates.enabled(Feature::AuthorizeNodeWithSelectors));
    for row in GATES.iter().filter(|row| row.toggles().is_none()) {
        match row.stage {
            Stage::Alpha => assert!(!row.default, "{}", row.name),
            Stage::Beta | Stage::Ga => assert!(row.default, "{}", row.name),
            Stage::Deprecated | Stage::Removed => {}
        }
    }
}

// R-VER-086
#[test]
fn an_alpha_gate_is_off_by_default_and_can_be_enabled() {
    let (gates, warnings) = parse(&["CBORServingAndStorage=true"]).unwrap();
    assert!(gates.enabled(Feature::CBORServingAndStorage));
    assert!(warnings.is_empty());
    assert_eq!(gate(Stage::Alpha, false).check(true), Ok(None));
}

// R-VER-087
#[test]
fn a_beta_gate_is_on_by_default_and_can_be_disabled() {
    let (gates, warnings) = parse(&["APIResponseCompression=false"]).unwrap();
    assert!(!gates.enabled(Feature::APIResponseCompression));
    assert!(gates.enabled(Feature::WatchList));
    assert!(warnings.is_empty());
    assert_eq!(gate(Stage::Beta, true).check(false), Ok(None));
}

// R-VER-051 R-VER-088
#[test]
fn a_ga_gate_is_locked_to_its_default() {
    assert_eq!(
        parse(&["AuthorizeWithSelectors=false"]),
        Err(FeatureGateError::Locked {
            name: "AuthorizeWithSelectors",
            value: false,
            locked: true,
        })
    );
    assert_eq!(
        FeatureGateError::Locked {
            name: "AuthorizeWithSelectors",
            value: false,
            locked: true,
        }
        .to_string(),
        "cannot set feature gate AuthorizeWithSelectors to false, feature is locked to true"
    );
    let (gates, warnings) = parse(&["AuthorizeNodeWithSelectors=true"]).unwrap();
    assert!(gates.enabled(Feature::AuthorizeNodeWithSelectors));
    assert_eq!(
        warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        vec![
            "Setting GA feature gate AuthorizeNodeWithSelectors=true. It will be removed in a \
             future release."
        ]
    );
}

// R-VER-083
#[test]
fn a_deprecated_gate_still_works_and_warns() {
    let deprecated = gate(Stage::Deprecated, false);
    let warning = deprecated.check(true).unwrap().expect("a warning");
    assert_eq!(
        warning.to_string(),
        "Setting deprecated feature gate Example=true. It will be removed in a future release."
    );
    assert!(deprecated.check(false).unwrap().is_some());
    assert!(
        deprecated
            .help_line()
            .contains("(DEPRECATED - default=false)")
    );
}

// R-VER-089
#[test]
fn a_removed_gate_cannot_be_set() {
    for value in ["true", "false"] {
        assert_eq!(
            parse(&[&format!("APIListChunking={value}")]),
            Err(FeatureGateError::Removed {
                name: "APIListChunking"
            })
        );
    }
    assert!(gate(Stage::Removed, true).check(true).is_err());
}

#[test]
fn parsing_trims_skips_empty_entries_and_lets_later_entries_win() {
    let (gates, _) = parse(&[
        " APIResponseCompression = false , ,WatchList=F",
        "APIResponseCompression=1",
    ])
    .unwrap();
    assert!(gates.enabled(Feature::APIResponseCompression));
    assert!(!gates.enabled(Feature::WatchList));
    assert_eq!(parse(&[""]).unwrap().0, FeatureGates::default());
}

#[test]
fn bad_entries_are_errors_with_kube_apiserver_wording() {
    let unknown = parse(&["NoSuchGate=true"]).unwrap_err();
    assert_eq!(unknown.to_string(), "unrecognized feature gate: NoSuchGate");
    let malformed = parse(&["WatchList"]).unwrap_err();
    assert_eq!(
        malformed,
        FeatureGateError::MalformedPair {
            pair: "WatchList".into()
        }
    );
    assert!(malformed.to_string().contains("expect string=bool"));
    assert_eq!(
        parse(&["WatchList=maybe"]).unwrap_err().to_string(),
        "invalid value of WatchList=maybe, expect true or false"
    );
}

#[test]
fn help_lists_every_gate_with_stage_and_default() {
    let help = FeatureGates::help();
    for row in GATES {
        assert!(help.contains(row.name), "{}", row.name);
    }
    assert!(help.contains("APIResponseCompression=true|false (BETA - default=true)"));
    assert!(help.contains(
        "CBORServingAndStorage=true|false (ALPHA - default=false, same on every replica)"
    ));
    assert!(help.contains("AllAlpha=true|false (ALPHA - default=false)"));
    assert!(help.contains("AllBeta=true|false (BETA - default=false)"));
    assert!(help.contains("AuthorizeWithSelectors=true|false (GA - default=true, locked)"));
    assert!(help.contains("APIListChunking (REMOVED - setting it is an error)"));
}

// AllAlpha and AllBeta set every gate of their stage that no entry names, in any order of the
// entries; an explicit entry wins; GA gates are not touched.
#[test]
fn all_alpha_and_all_beta_set_the_gates_not_set_explicitly() {
    let (gates, warnings) = parse(&["AllAlpha=true"]).unwrap();
    assert!(gates.enabled(Feature::CBORServingAndStorage));
    assert!(gates.enabled(Feature::AllowUnsafeMalformedObjectDeletion));
    assert!(
        gates.enabled(Feature::WatchList),
        "beta gates keep their default"
    );
    assert!(warnings.is_empty());
    for entries in [
        &["CBORServingAndStorage=false", "AllAlpha=true"][..],
        &["AllAlpha=true,CBORServingAndStorage=false"][..],
    ] {
        let (gates, _) = parse(entries).unwrap();
        assert!(
            !gates.enabled(Feature::CBORServingAndStorage),
            "{entries:?}"
        );
        assert!(
            gates.enabled(Feature::AllowUnsafeMalformedObjectDeletion),
            "{entries:?}"
        );
    }
    let (gates, _) = parse(&["AllBeta=false", "WatchList=true"]).unwrap();
    assert!(!gates.enabled(Feature::APIResponseCompression));
    assert!(gates.enabled(Feature::WatchList));
    assert!(
        gates.enabled(Feature::AuthorizeWithSelectors),
        "GA stays locked on"
    );
    assert!(
        !gates.enabled(Feature::CBORServingAndStorage),
        "alpha keeps its default"
    );
    let (gates, _) = parse(&["AllAlpha=true", "AllAlpha=false"]).unwrap();
    assert_eq!(gates, FeatureGates::default(), "the last toggle entry wins");
    assert!(parse(&["AllAlpha=maybe"]).is_err());
}
