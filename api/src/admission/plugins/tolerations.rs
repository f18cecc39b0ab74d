//! Pod tolerations as the scheduling plugins change them: the taints a toleration covers and
//! the merge of two lists keeping only the widest of overlapping tolerations (Kubernetes'
//! `tolerations.MergeTolerations`).

use serde_json::Value;

/// The most tolerations a merge compares (the comparison is quadratic); a pod beyond it is
/// refused rather than let it cost a replica seconds.
pub const MAX_MERGED: usize = 1024;

fn text<'a>(toleration: &'a Value, field: &str) -> &'a str {
    toleration.get(field).and_then(Value::as_str).unwrap_or("")
}

/// Whether `toleration` tolerates every taint with `key` and effect `effect` (an empty key
/// or effect in the toleration covers all of them).
pub fn covers(toleration: &Value, key: &str, effect: &str) -> bool {
    let (k, e) = (text(toleration, "key"), text(toleration, "effect"));
    (k == key || k.is_empty()) && (e == effect || e.is_empty())
}

/// The operator, with Kubernetes' default (`Equal`) for an empty one.
fn operator(toleration: &Value) -> &str {
    match text(toleration, "operator") {
        "" => "Equal",
        op => op,
    }
}

/// Whether `wide` tolerates every taint `narrow` tolerates.
fn is_superset(wide: &Value, narrow: &Value) -> bool {
    if wide == narrow {
        return true;
    }
    let key = text(wide, "key");
    if text(narrow, "key") != key && (!key.is_empty() || operator(wide) != "Exists") {
        return false;
    }
    let effect = text(wide, "effect");
    if text(narrow, "effect") != effect && !effect.is_empty() {
        return false;
    }
    if effect == "NoExecute"
        && let Some(limit) = wide.get("tolerationSeconds").and_then(Value::as_i64)
    {
        match narrow.get("tolerationSeconds").and_then(Value::as_i64) {
            Some(seconds) if seconds <= limit => {}
            _ => return false,
        }
    }
    match operator(wide) {
        "Equal" => operator(narrow) == "Equal" && text(narrow, "value") == text(wide, "value"),
        "Exists" => true,
        _ => false,
    }
}

/// `first` then `second`, less every toleration another one of them covers (of two equal
/// ones the first stays). `None` when together they are more than [`MAX_MERGED`].
pub fn merge(first: &[Value], second: &[Value]) -> Option<Vec<Value>> {
    let all: Vec<&Value> = first.iter().chain(second).collect();
    if all.len() > MAX_MERGED {
        return None;
    }
    let mut merged: Vec<Value> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        if merged.iter().any(|kept| is_superset(kept, t)) {
            continue;
        }
        let later = all.get(i + 1..).unwrap_or_default();
        if later.iter().any(|t2| t2 != t && is_superset(t2, t)) {
            continue;
        }
        merged.push((*t).clone());
    }
    Some(merged)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_empty_key_or_effect_covers_all() {
        let any = json!({"operator": "Exists"});
        assert!(covers(&any, "node.kubernetes.io/not-ready", "NoExecute"));
        let key_only = json!({"key": "a", "operator": "Exists"});
        assert!(covers(&key_only, "a", "NoExecute"));
        assert!(!covers(&key_only, "b", "NoExecute"));
        let other_effect = json!({"key": "a", "operator": "Exists", "effect": "NoSchedule"});
        assert!(!covers(&other_effect, "a", "NoExecute"));
    }

    #[test]
    fn merging_keeps_the_widest_and_the_first_of_equals() {
        let exists = json!({"key": "a", "operator": "Exists"});
        let equal = json!({"key": "a", "operator": "Equal", "value": "v", "effect": "NoSchedule"});
        let other = json!({"key": "b", "operator": "Exists", "effect": "NoSchedule"});
        let merged = merge(
            &[equal.clone(), other.clone()],
            &[exists.clone(), other.clone()],
        );
        assert_eq!(merged, Some(vec![other, exists]));
    }

    #[test]
    fn shorter_no_execute_seconds_are_not_wider() {
        let short = json!({"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10});
        let long = json!({"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60});
        let merged = merge(&[short], std::slice::from_ref(&long)).expect("small");
        assert_eq!(
            merged,
            vec![long],
            "the longer one tolerates the shorter one's taints"
        );
    }

    #[test]
    fn a_merge_beyond_the_budget_is_refused() {
        let many = vec![json!({"key": "a"}); MAX_MERGED + 1];
        assert_eq!(merge(&many, &[]), None);
    }
}
