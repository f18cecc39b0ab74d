//! What a PodDisruptionBudget allows now, computed live from the pods it selects (no
//! disruption controller runs yet to keep its status), with the disruption controller's
//! arithmetic: healthy pods are the selected ones that are Ready and not being deleted; the
//! pods expected are the selected ones; `minAvailable` or `maxUnavailable` (an integer or a
//! percentage of the expected pods, rounded up) give the healthy pods desired.

use serde_json::Value;

/// A budget's numbers, as its status names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Budget {
    /// `status.expectedPods`.
    pub expected: i64,
    /// `status.desiredHealthy`.
    pub desired_healthy: i64,
    /// `status.currentHealthy`.
    pub current_healthy: i64,
}

impl Budget {
    /// The budget of `pdb` over the pods it selects; an error names an unreadable
    /// `minAvailable`/`maxUnavailable`.
    pub(super) fn of(pdb: &Value, selected: &[Value]) -> Result<Self, String> {
        let live: Vec<&Value> = selected
            .iter()
            .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
            .collect();
        let expected = live.len() as i64;
        let current_healthy = live.iter().filter(|p| is_ready(p)).count() as i64;
        let desired_healthy = match (
            pdb.pointer("/spec/maxUnavailable"),
            pdb.pointer("/spec/minAvailable"),
        ) {
            (Some(max), _) if !max.is_null() => (expected - scaled(max, expected)?).max(0),
            (_, Some(min)) if !min.is_null() => scaled(min, expected)?,
            _ => 0,
        };
        Ok(Self {
            expected,
            desired_healthy,
            current_healthy,
        })
    }

    /// `status.disruptionsAllowed`: how many healthy pods may go.
    pub(super) fn disruptions_allowed(self) -> i64 {
        (self.current_healthy - self.desired_healthy).max(0)
    }
}

/// Whether `pod` has the condition `Ready=True`.
pub(super) fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// An int-or-string as a count of `total`: an integer as is, `N%` as N percent of `total`
/// rounded up (upstream's `GetScaledValueFromIntOrPercent(.., true)`).
fn scaled(value: &Value, total: i64) -> Result<i64, String> {
    if let Some(n) = value.as_i64() {
        return Ok(n);
    }
    let text = value.as_str().unwrap_or_default();
    let percent: i64 = text
        .strip_suffix('%')
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("invalid value for IntOrString: invalid value {text:?}"))?;
    Ok((percent * total + 99) / 100)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pods(ready: usize, unready: usize) -> Vec<Value> {
        let ready_pod = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let unready_pod = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
        let mut all = vec![ready_pod; ready];
        all.extend(vec![unready_pod; unready]);
        all
    }

    // R-RES-008
    #[test]
    fn budgets_from_min_available_and_max_unavailable() {
        let min = |v: Value| json!({"spec": {"minAvailable": v}});
        let max = |v: Value| json!({"spec": {"maxUnavailable": v}});
        let b = Budget::of(&min(json!(2)), &pods(3, 1)).expect("budget");
        assert_eq!(
            b,
            Budget {
                expected: 4,
                desired_healthy: 2,
                current_healthy: 3
            }
        );
        assert_eq!(b.disruptions_allowed(), 1);
        let b = Budget::of(&min(json!("50%")), &pods(2, 1)).expect("budget");
        assert_eq!(b.desired_healthy, 2, "50% of 3 rounds up");
        assert_eq!(b.disruptions_allowed(), 0);
        let b = Budget::of(&max(json!(1)), &pods(3, 0)).expect("budget");
        assert_eq!((b.desired_healthy, b.disruptions_allowed()), (2, 1));
        let b = Budget::of(&max(json!("100%")), &pods(1, 0)).expect("budget");
        assert_eq!(b.desired_healthy, 0);
        assert!(Budget::of(&min(json!("half")), &pods(1, 0)).is_err());
        let mut deleting = pods(1, 0);
        deleting[0]["metadata"] = json!({"deletionTimestamp": "2026-01-01T00:00:00Z"});
        assert_eq!(
            Budget::of(&min(json!(0)), &deleting)
                .expect("budget")
                .current_healthy,
            0
        );
    }
}
