//! Tests of judging one write against the quotas: Kubernetes' messages and charges.

use serde_json::json;

use super::*;

fn quota(name: &str, hard: Value, used: Option<Value>) -> Quota {
    let mut status = json!({"hard": hard});
    if let Some(used) = used {
        status["used"] = used;
    }
    Quota::from_object(&json!({"metadata": {"name": name}, "status": status}))
}

fn pod(resources: Value) -> Value {
    json!({"metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]}})
}

fn create(object: &Value) -> Write<'_> {
    Write {
        operation: Operation::Create,
        subresource: "",
        object,
        old: None,
    }
}

fn run(quotas: &[Quota], evaluator: &Evaluator, write: &Write<'_>) -> Result<Vec<String>, Refusal> {
    let changed = check(quotas, evaluator, write, &[], Utc::now())?;
    Ok(changed
        .into_iter()
        .map(|(i, used)| format!("{}: {used}", quotas[i].name))
        .collect())
}

#[test]
fn a_write_over_the_limit_is_refused_with_kubernetes_message() {
    let quotas = [quota(
        "q",
        json!({"pods": "2", "requests.cpu": "1"}),
        Some(json!({"pods": "2", "requests.cpu": "500m"})),
    )];
    let object = pod(json!({"requests": {"cpu": "600m"}}));
    assert_eq!(
        run(&quotas, &Evaluator::Pods, &create(&object)),
        Err(Refusal::Forbidden(
            "exceeded quota: q, requested: pods=1,requests.cpu=600m, used: pods=2,requests.cpu=500m, \
             limited: pods=2,requests.cpu=1"
                .into()
        ))
    );
    let fits = pod(json!({"requests": {"cpu": "500m"}}));
    let quotas = [quota(
        "q",
        json!({"pods": "3", "requests.cpu": "1"}),
        Some(json!({"pods": "2", "requests.cpu": "500m"})),
    )];
    assert_eq!(
        run(&quotas, &Evaluator::Pods, &create(&fits)),
        Ok(vec!["q: pods=3,requests.cpu=1".to_owned()])
    );
}

#[test]
fn compute_quotas_require_containers_to_state_them() {
    let quotas = [quota(
        "compute",
        json!({"limits.cpu": "4"}),
        Some(json!({"limits.cpu": "0"})),
    )];
    let object = pod(json!({}));
    assert_eq!(
        run(&quotas, &Evaluator::Pods, &create(&object)),
        Err(Refusal::Forbidden(
            "failed quota: compute: must specify limits.cpu for: c".into()
        ))
    );
}

#[test]
fn a_quota_without_usage_of_a_resource_it_limits_refuses_until_counted() {
    let quotas = [quota(
        "q",
        json!({"pods": "2", "count/configmaps": "1"}),
        None,
    )];
    let object = pod(json!({}));
    assert_eq!(
        run(&quotas, &Evaluator::Pods, &create(&object)),
        Err(Refusal::Forbidden(
            "status unknown for quota: q, resources: pods".into()
        ))
    );
    // A quota the controller never saw (no status.hard) limits nothing yet, as in Kubernetes.
    let unseen = [quota("q", json!({}), None)];
    assert_eq!(run(&unseen, &Evaluator::Pods, &create(&object)), Ok(vec![]));
}

#[test]
fn object_counts_charge_only_the_quotas_that_limit_them() {
    let quotas = [
        quota("a", json!({"pods": "1"}), Some(json!({"pods": "0"}))),
        quota(
            "b",
            json!({"count/configmaps": "3"}),
            Some(json!({"count/configmaps": "1"})),
        ),
    ];
    let object = json!({"metadata": {"name": "cm"}});
    assert_eq!(
        run(&quotas, &Evaluator::of("", "configmaps"), &create(&object)),
        Ok(vec!["b: count/configmaps=2".to_owned()])
    );
    let update = Write {
        operation: Operation::Update,
        old: Some(&object),
        ..create(&object)
    };
    assert_eq!(
        run(&quotas, &Evaluator::of("", "configmaps"), &update),
        Ok(vec![])
    );
}

#[test]
fn scoped_quotas_charge_only_the_pods_in_their_scope() {
    let best_effort = Quota::from_object(&json!({"metadata": {"name": "be"},
        "spec": {"scopes": ["BestEffort"]},
        "status": {"hard": {"pods": "1"}, "used": {"pods": "1"}}}));
    let burstable = pod(json!({"requests": {"cpu": "1"}}));
    assert_eq!(
        run(
            std::slice::from_ref(&best_effort),
            &Evaluator::Pods,
            &create(&burstable)
        ),
        Ok(vec![])
    );
    let plain = pod(json!({}));
    assert!(matches!(
        run(&[best_effort], &Evaluator::Pods, &create(&plain)),
        Err(Refusal::Forbidden(m)) if m.starts_with("exceeded quota: be, requested: pods=1")
    ));
}

#[test]
fn service_updates_are_charged_the_difference() {
    let quotas = [quota(
        "q",
        json!({"services.nodeports": "2"}),
        Some(json!({"services.nodeports": "1"})),
    )];
    let old = json!({"spec": {"type": "NodePort", "ports": [{"port": 1}]}});
    let new =
        json!({"spec": {"type": "NodePort", "ports": [{"port": 1}, {"port": 2}, {"port": 3}]}});
    let update = Write {
        operation: Operation::Update,
        subresource: "",
        object: &new,
        old: Some(&old),
    };
    assert_eq!(
        run(&quotas, &Evaluator::Services, &update),
        Err(Refusal::Forbidden(
            "exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=1, \
             limited: services.nodeports=2"
                .into()
        ))
    );
}

#[test]
fn limited_resources_need_a_covering_quota() {
    let limited = [LimitedResource {
        resource: "pods".into(),
        match_contains: vec!["cpu".into()],
        ..LimitedResource::default()
    }];
    let object = pod(json!({"requests": {"cpu": "1"}}));
    assert_eq!(
        check(
            &[],
            &Evaluator::Pods,
            &create(&object),
            &limited,
            Utc::now()
        ),
        Err(Refusal::Forbidden(
            "insufficient quota to consume: cpu,requests.cpu".into()
        ))
    );
    assert_eq!(
        check(
            &[],
            &Evaluator::Pods,
            &create(&pod(json!({}))),
            &limited,
            Utc::now()
        ),
        Ok(BTreeMap::new())
    );
    let covering = [quota(
        "q",
        json!({"cpu": "2", "requests.cpu": "2"}),
        Some(json!({"cpu": "0", "requests.cpu": "0"})),
    )];
    assert!(
        check(
            &covering,
            &Evaluator::Pods,
            &create(&object),
            &limited,
            Utc::now()
        )
        .is_ok()
    );

    let scoped = [LimitedResource {
        resource: "pods".into(),
        match_scopes: vec![ScopeSelector {
            scope: "PriorityClass".into(),
            operator: "In".into(),
            values: vec!["critical".into()],
        }],
        ..LimitedResource::default()
    }];
    let critical = json!({"spec": {"priorityClassName": "critical", "containers": []}});
    assert_eq!(
        check(
            &[],
            &Evaluator::Pods,
            &create(&critical),
            &scoped,
            Utc::now()
        ),
        Err(Refusal::Internal(
            "insufficient quota to match these scopes: [{PriorityClass In [critical]}]".into()
        ))
    );
}

#[test]
fn negative_usage_is_refused() {
    let quotas = [quota(
        "q",
        json!({"requests.cpu": "2"}),
        Some(json!({"requests.cpu": "0"})),
    )];
    let object = pod(json!({"requests": {"cpu": "-1"}}));
    assert_eq!(
        run(&quotas, &Evaluator::Pods, &create(&object)),
        Err(Refusal::Forbidden(
            "quota usage is negative for resource(s): cpu,requests.cpu".into()
        ))
    );
}
