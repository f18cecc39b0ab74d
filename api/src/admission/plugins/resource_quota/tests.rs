//! Tests of the usage a quota counts: its evaluators, and the sums over a namespace.

use chrono::Utc;
use serde_json::json;

use super::*;

#[test]
fn a_quota_is_counted_by_the_evaluators_of_its_resources() {
    let hard = ResourceList::from_json(Some(&json!({
        "pods": "10", "requests.cpu": "4", "count/configmaps": "5", "configmaps": "5",
        "count/deployments.apps": "2", "bogus": "1"})));
    let found = evaluators_for(&hard);
    let keys: Vec<String> = found
        .iter()
        .map(|((g, p), (_, names))| format!("{g}/{p}: {}", names.join(",")))
        .collect();
    assert_eq!(
        keys,
        [
            "/configmaps: configmaps,count/configmaps",
            "/pods: pods,requests.cpu",
            "apps/deployments: count/deployments.apps"
        ]
    );
}

#[test]
fn usage_sums_the_matching_objects_and_zeroes_the_rest() {
    let pods = [
        json!({"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}}),
        json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Failed"}}),
        json!({"spec": {"containers": [{"name": "a"}]}}),
    ];
    let names = [
        "pods".to_owned(),
        "requests.cpu".to_owned(),
        "requests.memory".to_owned(),
    ];
    assert_eq!(
        usage_of(&Evaluator::Pods, &names, &[], &pods, Utc::now()).to_string(),
        "pods=2,requests.cpu=1,requests.memory=0"
    );
    let best_effort = [ScopeSelector {
        scope: "BestEffort".into(),
        operator: "Exists".into(),
        values: Vec::new(),
    }];
    assert_eq!(
        usage_of(
            &Evaluator::Pods,
            &names[..1],
            &best_effort,
            &pods,
            Utc::now()
        )
        .to_string(),
        "pods=1"
    );
}
