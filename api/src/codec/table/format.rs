//! Cell formats shared by the printers: ages relative to the request's time, label maps and
//! label selectors as Kubernetes prints them, lists cut after a few entries, and reading
//! fields of an object held as JSON.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Map;
use serde_json::Value;

/// The string at `pointer` in `v` (`""` when absent or not a string).
pub(super) fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The integer at `pointer` in `v` (0 when absent).
pub(super) fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The boolean at `pointer` in `v`, if set.
pub(super) fn flag(v: &Value, pointer: &str) -> Option<bool> {
    v.pointer(pointer).and_then(Value::as_bool)
}

/// The array at `pointer` in `v` (empty when absent).
pub(super) fn items<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The number of entries of the map or array at `pointer` (0 when absent).
pub(super) fn count(v: &Value, pointer: &str) -> i64 {
    let n = match v.pointer(pointer) {
        Some(Value::Object(map)) => map.len(),
        Some(Value::Array(list)) => list.len(),
        _ => 0,
    };
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `value`, or `placeholder` when it is empty.
pub(super) fn or(value: &str, placeholder: &str) -> String {
    if value.is_empty() {
        placeholder.to_owned()
    } else {
        value.to_owned()
    }
}

/// `True`/`False` for a set boolean, `<unset>` otherwise.
pub(super) fn bool_text(value: Option<bool>) -> String {
    match value {
        Some(true) => "True".to_owned(),
        Some(false) => "False".to_owned(),
        None => "<unset>".to_owned(),
    }
}

/// The time at `pointer`, if it is a valid RFC 3339 timestamp.
pub(super) fn time(v: &Value, pointer: &str) -> Option<DateTime<Utc>> {
    let raw = v.pointer(pointer)?.as_str()?;
    DateTime::parse_from_rfc3339(raw)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The time elapsed from the timestamp at `pointer` to `now` (`<unknown>` when unset).
pub(super) fn since(v: &Value, pointer: &str, now: DateTime<Utc>) -> String {
    time(v, pointer).map_or_else(|| "<unknown>".to_owned(), |t| human_duration(now - t))
}

/// The object's age: the time since `metadata.creationTimestamp`.
pub(super) fn age(v: &Value, now: DateTime<Utc>) -> String {
    since(v, "/metadata/creationTimestamp", now)
}

/// A duration as Kubernetes prints ages: two or three significant figures (`90s`, `5m3s`,
/// `2d4h`, `3y12d`); a negative one within two seconds is `0s`, beyond it `<invalid>`.
pub(super) fn human_duration(d: chrono::Duration) -> String {
    let seconds = d.num_seconds();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{days}d"),
            h => format!("{days}d{h}h"),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return match days % 365 {
            0 => format!("{years}y"),
            d => format!("{years}y{d}d"),
        };
    }
    format!("{years}y")
}

/// A label map as `k1=v1,k2=v2` in key order, `<none>` when empty or absent.
pub(super) fn labels(map: Option<&Value>) -> String {
    let Some(Value::Object(map)) = map else {
        return "<none>".to_owned();
    };
    if map.is_empty() {
        return "<none>".to_owned();
    }
    let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join(",")
}

/// A label selector that names an unknown operator, so it selects nothing printable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct InvalidSelector;

/// A `LabelSelector` (`matchLabels`, `matchExpressions`) as its requirements in key order:
/// `app=web,tier in (a,b),!legacy`; empty when the selector is absent or selects everything.
pub(super) fn selector(sel: Option<&Value>) -> Result<String, InvalidSelector> {
    let Some(sel) = sel.filter(|s| !s.is_null()) else {
        return Ok(String::new());
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(Value::Object(labels)) = sel.get("matchLabels") {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or_default();
            requirements.push((key.clone(), format!("{key}={value}")));
        }
    }
    for expr in items(sel, "/matchExpressions") {
        let key = text(expr, "/key");
        let mut values: Vec<&str> = items(expr, "/values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        values.dedup();
        let printed = match text(expr, "/operator") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => return Err(InvalidSelector),
        };
        requirements.push((key.to_owned(), printed));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(requirements
        .into_iter()
        .map(|(_, printed)| printed)
        .collect::<Vec<_>>()
        .join(","))
}

/// A selector cell of the wide columns: `<none>` when empty, `<error>` when invalid.
pub(super) fn selector_cell(sel: Option<&Value>) -> String {
    match selector(sel) {
        Ok(s) if s.is_empty() => "<none>".to_owned(),
        Ok(s) => s,
        Err(InvalidSelector) => "<error>".to_owned(),
    }
}

/// At most `max` entries joined with `,`, then ` + N more...`; `<unset>` when there are none.
pub(super) fn list_with_more(list: &[String], total: usize, max: usize) -> String {
    let shown = list.iter().take(max).cloned().collect::<Vec<_>>().join(",");
    if total > max {
        format!("{shown} + {} more...", total - max)
    } else if shown.is_empty() {
        "<unset>".to_owned()
    } else {
        shown
    }
}

/// The containers of a pod template as two cells: their names and their images, each
/// joined with `,`.
pub(super) fn containers(spec: Option<&Value>) -> (String, String) {
    let list = spec
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let names: Vec<&str> = list.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = list.iter().map(|c| text(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// The subjects of a binding as three lists: users, groups and service accounts
/// (`namespace/name`).
pub(super) fn subjects(binding: &Value) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in items(binding, "/subjects") {
        let name = text(subject, "/name").to_owned();
        match text(subject, "/kind") {
            "User" => users.push(name),
            "Group" => groups.push(name),
            "ServiceAccount" => {
                accounts.push(format!("{}/{name}", text(subject, "/namespace")));
            }
            _ => {}
        }
    }
    (users, groups, accounts)
}

/// The object's map at `pointer`, if it is one.
pub(super) fn map<'a>(v: &'a Value, pointer: &str) -> Option<&'a Map<String, Value>> {
    v.pointer(pointer).and_then(Value::as_object)
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use serde_json::json;

    use super::*;

    #[test]
    fn durations_keep_two_or_three_figures() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (303, "5m3s"),
            (600, "10m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 25 * 60, "3h25m"),
            (9 * 3600, "9h"),
            (47 * 3600, "47h"),
            (50 * 3600, "2d2h"),
            (72 * 3600, "3d"),
            (20 * 86_400, "20d"),
            (800 * 86_400, "2y70d"),
            (365 * 3 * 86_400, "3y"),
            (365 * 9 * 86_400, "9y"),
        ];
        for (seconds, want) in cases {
            assert_eq!(
                human_duration(Duration::seconds(seconds)),
                want,
                "{seconds}s"
            );
        }
    }

    #[test]
    fn selectors_print_requirements_in_key_order() {
        let sel = json!({
            "matchLabels": {"tier": "web", "app": "shop"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "legacy", "operator": "DoesNotExist"},
                {"key": "zone", "operator": "NotIn", "values": ["b"]},
                {"key": "canary", "operator": "Exists"}
            ]
        });
        assert_eq!(
            selector(Some(&sel)).unwrap(),
            "app=shop,canary,env in (dev,prod),!legacy,tier=web,zone notin (b)"
        );
        assert_eq!(selector_cell(Some(&json!({}))), "<none>");
        assert_eq!(selector_cell(None), "<none>");
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
        assert_eq!(selector_cell(Some(&bad)), "<error>");
    }

    #[test]
    fn label_maps_and_short_lists() {
        assert_eq!(labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(labels(Some(&json!({}))), "<none>");
        let four: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        assert_eq!(list_with_more(&four, 4, 3), "a,b,c + 1 more...");
        assert_eq!(list_with_more(&[], 0, 3), "<unset>");
    }
}
