//! Value validation of a custom resource against its schema, as kube-openapi's schema
//! validator does it and as apiextensions turns its results into field errors (type, format,
//! numbers, strings, lists, enum, objects, `allOf`/`anyOf`/`oneOf`/`not`), with ratcheting:
//! on an update, the errors of a value equal to the old object's value at the same place
//! (object fields by name, map-list items by their keys, set items by value) are dropped.

use serde_json::Map;
use serde_json::Value;

use super::format;
use super::list_type::canonical;
use super::node::Id;
use super::node::ListType;
use super::node::Node;
use super::numbers::Num;
use super::numbers::is_json_integer;
use crate::validation::FieldError;
use crate::validation::go_float;

/// The deepest the walk goes (schemas nest at most 64 levels; each level may be an object
/// and a list).
const MAX_WALK_DEPTH: usize = 160;

/// The most errors one walk collects (more are not looked for; the answer lists fewer, see
/// [`within_budget`](crate::validation::within_budget)).
pub(super) const MAX_ERRORS: usize = 4096;

/// One validation pass.
pub(super) struct Validator<'a> {
    /// The structural nodes.
    pub nodes: &'a [Node],
}

/// The field an error names: kube-openapi's name without its leading `.`.
fn field(name: &str) -> String {
    name.strip_prefix('.').unwrap_or(name).to_owned()
}

/// An error that kube-openapi reports without a field (`Invalid value: ""` at no path).
fn unplaced(message: String) -> FieldError {
    FieldError::invalid("", "", message)
}

/// The type name and format kube-openapi gives a value.
fn type_of(v: &Value) -> (&'static str, &'static str) {
    match v {
        Value::Null => ("null", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match Num::of(n) {
            Num::Int(_) => ("integer", "int64"),
            Num::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    }
}

/// The name of property `name` below `path`.
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// `v` as an `enum` entry prints in the list of supported values.
fn enum_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether `v` equals the `enum` entry `e` (numbers compare by value, as Go converts them).
fn enum_match(v: &Value, e: &Value) -> bool {
    match (v, e) {
        (Value::Number(a), Value::Number(b)) => Num::of(a).as_f64() == Num::of(b).as_f64(),
        _ => v == e,
    }
}

impl Validator<'_> {
    fn node(&self, id: Id) -> Option<&Node> {
        self.nodes.get(id)
    }

    /// The errors of `v` at node `id` named `path`; `old` is the correlated old value, whose
    /// equality with `v` drops them.
    pub fn check(
        &self,
        id: Id,
        v: &Value,
        path: &str,
        old: Option<&Value>,
        depth: usize,
    ) -> Vec<FieldError> {
        let Some(node) = self.node(id) else {
            return Vec::new();
        };
        if depth > MAX_WALK_DEPTH {
            return Vec::new();
        }
        let mut errs = Vec::new();
        if v.is_null() {
            self.check_type(node, v, path, &mut errs);
            self.check_enum(node, v, path, &mut errs);
        } else {
            self.check_type(node, v, path, &mut errs);
            self.check_branches(node, v, path, depth, &mut errs);
            match v {
                Value::String(s) => {
                    self.check_string(node, s, path, &mut errs);
                    self.check_format(node, s, path, &mut errs);
                }
                Value::Number(n) => self.check_number(node, Num::of(n), v, path, &mut errs),
                Value::Array(list) => self.check_list(node, list, path, old, depth, &mut errs),
                _ => {}
            }
            self.check_enum(node, v, path, &mut errs);
            if let Value::Object(map) = v {
                self.check_object(node, map, path, old, depth, &mut errs);
            }
        }
        if !errs.is_empty() && old == Some(v) {
            errs.clear();
        }
        errs
    }

    fn check_type(&self, node: &Node, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
        let types = node.types();
        let format = node.checks.format.as_str();
        if types.is_empty() && format.is_empty() {
            return;
        }
        let mismatch = |expected: &str, got: &str| {
            FieldError::type_invalid(
                field(path),
                got,
                format!("{path} in body must be of type {expected}: \"{got}\""),
            )
        };
        if v.is_null() {
            if !types.is_empty() && !node.nullable {
                errs.push(mismatch(&types.join(","), "null"));
            }
            return;
        }
        let (got, got_format) = type_of(v);
        let float_int = matches!(v, Value::Number(n) if matches!(Num::of(n), Num::Float(f) if is_json_integer(f)))
            && types.contains(&"integer");
        let int_float = got == "integer" && types.contains(&"number");
        let textual = matches!(v, Value::String(_) | Value::Array(_));
        let numeric = types.contains(&"number") || types.contains(&"integer");
        if !format.is_empty() {
            // A format names the type of a non-string (`int32`), and stands in for the type
            // check of a string or list that is not meant to be a number.
            let fits =
                textual || types.contains(&got) || got_format == format || float_int || int_float;
            if !fits {
                errs.push(mismatch(format, got_format));
                return;
            }
            if textual && !numeric {
                return;
            }
        }
        if !(types.contains(&got) || float_int || int_float) {
            errs.push(mismatch(&types.join(","), got));
        }
    }

    fn check_branches(
        &self,
        node: &Node,
        v: &Value,
        path: &str,
        depth: usize,
        errs: &mut Vec<FieldError>,
    ) {
        let c = &node.checks;
        let run = |id: Id| self.check(id, v, path, None, depth + 1);
        if !c.any_of.is_empty() {
            let results: Vec<Vec<FieldError>> = c.any_of.iter().map(|&b| run(b)).collect();
            if !results.iter().any(Vec::is_empty) {
                errs.push(unplaced(format!(
                    "{path:?} must validate at least one schema (anyOf)"
                )));
                if let Some(best) = results.into_iter().min_by_key(Vec::len) {
                    errs.extend(best);
                }
            }
        }
        if !c.one_of.is_empty() {
            let results: Vec<Vec<FieldError>> = c.one_of.iter().map(|&b| run(b)).collect();
            let valid = results.iter().filter(|r| r.is_empty()).count();
            if valid != 1 {
                let found = if valid == 0 {
                    "Found none valid".to_owned()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                errs.push(unplaced(format!(
                    "{path:?} must validate one and only one schema (oneOf). {found}"
                )));
                if let Some(best) = results
                    .into_iter()
                    .filter(|_| valid == 0)
                    .min_by_key(Vec::len)
                {
                    errs.extend(best);
                }
            }
        }
        if !c.all_of.is_empty() {
            let mut valid = 0;
            for &b in &c.all_of {
                let r = run(b);
                valid += usize::from(r.is_empty());
                errs.extend(r);
            }
            if valid != c.all_of.len() {
                let none = if valid == 0 { ". None validated" } else { "" };
                errs.push(unplaced(format!(
                    "{path:?} must validate all the schemas (allOf){none}"
                )));
            }
        }
        if c.not.is_some_and(|not| run(not).is_empty()) {
            errs.push(unplaced(format!(
                "{path:?} must not validate the schema (not)"
            )));
        }
    }

    fn check_string(&self, node: &Node, s: &str, path: &str, errs: &mut Vec<FieldError>) {
        let c = &node.checks;
        let chars = s.chars().count() as i64;
        if let Some(max) = c.max_length.filter(|&max| chars > max) {
            errs.push(FieldError::too_long(
                field(path),
                usize::try_from(max).unwrap_or_default(),
            ));
        } else if let Some(min) = c.min_length.filter(|&min| chars < min) {
            errs.push(FieldError::invalid(
                field(path),
                s,
                format!("{path} in body should be at least {min} chars long"),
            ));
        } else if let Some((pattern, _)) = c.pattern.as_ref().filter(|(_, re)| !re.is_match(s)) {
            errs.push(FieldError::invalid(
                field(path),
                s,
                format!("{path} in body should match '{pattern}'"),
            ));
        }
    }

    fn check_format(&self, node: &Node, s: &str, path: &str, errs: &mut Vec<FieldError>) {
        let name = node.checks.format.as_str();
        let normalized = name.replace('-', "");
        if name.is_empty() || !format::known(&normalized) || format::valid(&normalized, s) {
            return;
        }
        errs.push(FieldError::type_invalid(
            field(path),
            s,
            format!("{path} in body must be of type {name}: {s:?}"),
        ));
    }

    fn check_number(&self, node: &Node, n: Num, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
        let c = &node.checks;
        let (kind, format) = match node.types().as_slice() {
            ["integer"] => ("integer", c.format.as_str()),
            ["number"] => ("number", c.format.as_str()),
            _ => ("", ""),
        };
        let in_range = |x: Num| fits(x, kind, format);
        let range_error = |prefix: &str| {
            unplaced(if format.is_empty() {
                format!("{prefix} value must be of type {kind} (default format) in {path}")
            } else {
                format!("{prefix} value must be of type {kind} with format {format} in {path}")
            })
        };
        if !in_range(n) {
            errs.push(range_error("Checked"));
        }
        if let Some(factor) = c.multiple_of {
            let native = in_range(Num::Float(factor));
            if !native {
                errs.push(range_error("MultipleOf"));
            }
            if let Some(msg) = multiple_of(n, factor, native, path) {
                errs.push(FieldError::invalid(field(path), v.clone(), msg));
            }
        }
        for (bound, is_max) in [(c.minimum, false), (c.maximum, true)] {
            let Some((limit, exclusive)) = bound else {
                continue;
            };
            let label = if is_max {
                "Maximum boundary"
            } else {
                "Minimum boundary"
            };
            let native = in_range(Num::Float(limit));
            if !native {
                errs.push(range_error(label));
            }
            let (value, limit_text) = match n {
                Num::Int(i) if native => (i as f64, (limit as i64).to_string()),
                _ => (n.as_f64(), go_float(limit)),
            };
            let limit = match n {
                Num::Int(_) if native => (limit as i64) as f64,
                _ => limit,
            };
            let fails = match (is_max, exclusive) {
                (true, false) => value > limit,
                (true, true) => value >= limit,
                (false, false) => value < limit,
                (false, true) => value <= limit,
            };
            if fails {
                let relation = match (is_max, exclusive) {
                    (true, false) => "less than or equal to",
                    (true, true) => "less than",
                    (false, false) => "greater than or equal to",
                    (false, true) => "greater than",
                };
                errs.push(FieldError::invalid(
                    field(path),
                    v.clone(),
                    format!("{path} in body should be {relation} {limit_text}"),
                ));
            }
        }
    }

    fn check_list(
        &self,
        node: &Node,
        list: &[Value],
        path: &str,
        old: Option<&Value>,
        depth: usize,
        errs: &mut Vec<FieldError>,
    ) {
        let c = &node.checks;
        if let Some(items) = node.items {
            for (i, item) in list.iter().enumerate() {
                if errs.len() >= MAX_ERRORS {
                    break;
                }
                let old_item = old.and_then(|o| correlate_item(node, item, o));
                errs.extend(self.check(items, item, &format!("{path}[{i}]"), old_item, depth + 1));
            }
        }
        let size = list.len() as i64;
        if let Some(min) = c.min_items.filter(|&min| size < min) {
            errs.push(FieldError::invalid(
                field(path),
                size,
                format!("{path} in body should have at least {min} items"),
            ));
        }
        if let Some(max) = c.max_items.filter(|&max| size > max) {
            errs.push(FieldError::too_many(
                field(path),
                list.len(),
                usize::try_from(max).unwrap_or_default(),
            ));
        }
        if c.unique_items && has_duplicates(list) {
            errs.push(FieldError::invalid(
                field(path),
                "",
                format!("{path} in body shouldn't contain duplicates"),
            ));
        }
    }

    fn check_enum(&self, node: &Node, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
        let values = &node.checks.enumeration;
        if values.is_empty() || (!v.is_null() && values.iter().any(|e| enum_match(v, e))) {
            return;
        }
        let supported: Vec<String> = values.iter().map(enum_text).collect();
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        errs.push(FieldError::not_supported(
            field(path),
            v.clone(),
            &supported,
        ));
    }

    fn check_object(
        &self,
        node: &Node,
        map: &Map<String, Value>,
        path: &str,
        old: Option<&Value>,
        depth: usize,
        errs: &mut Vec<FieldError>,
    ) {
        let c = &node.checks;
        let size = map.len() as i64;
        if let Some(min) = c.min_properties.filter(|&min| size < min) {
            errs.push(FieldError::invalid(
                field(path),
                size,
                format!("{path} in body should have at least {min} properties"),
            ));
        }
        if let Some(max) = c.max_properties.filter(|&max| size > max) {
            errs.push(FieldError::too_many(
                field(path),
                map.len(),
                usize::try_from(max).unwrap_or_default(),
            ));
        }
        // The type fields of the root are never correlated.
        let correlate = |k: &str| {
            if path.is_empty() && (k == "apiVersion" || k == "kind") {
                return None;
            }
            old.and_then(|o| o.get(k))
        };
        if let Some(values) = node.additional {
            for (k, child_value) in map {
                if errs.len() >= MAX_ERRORS {
                    break;
                }
                if !node.properties.contains_key(k) {
                    let name = format!("{path}.{k}");
                    errs.extend(self.check(values, child_value, &name, correlate(k), depth + 1));
                }
            }
        }
        for (name, &prop) in &node.properties {
            if errs.len() >= MAX_ERRORS {
                break;
            }
            if let Some(child_value) = map.get(name) {
                errs.extend(self.check(
                    prop,
                    child_value,
                    &child(path, name),
                    correlate(name),
                    depth + 1,
                ));
            }
        }
        for k in &c.required {
            if !map.contains_key(k) {
                errs.push(FieldError::required(field(&format!("{path}.{k}")), ""));
            }
        }
    }
}

/// The old item a new list item correlates with: in a map list the one with the same keys,
/// in a set an equal one; none in an atomic list.
fn correlate_item<'o>(node: &Node, item: &Value, old: &'o Value) -> Option<&'o Value> {
    let Value::Array(old_list) = old else {
        return None;
    };
    match &node.list_type {
        ListType::Atomic => None,
        ListType::Set => old_list.iter().find(|o| *o == item),
        ListType::Map(keys) => {
            let key_of = |v: &Value| -> Option<Vec<Option<Value>>> {
                let Value::Object(m) = v else {
                    return None;
                };
                Some(keys.iter().map(|k| m.get(k).cloned()).collect())
            };
            let wanted = key_of(item)?;
            old_list
                .iter()
                .find(|o| key_of(o).as_ref() == Some(&wanted))
        }
    }
}

/// Whether two items of `list` are equal (kube-openapi's `uniqueItems`).
fn has_duplicates(list: &[Value]) -> bool {
    let mut seen = std::collections::HashSet::new();
    list.iter().any(|v| !seen.insert(canonical(v, 0)))
}

/// Whether `n` fits `kind` with `format` (kube-openapi's `IsValueValidAgainstRange`).
fn fits(n: Num, kind: &str, format: &str) -> bool {
    match kind {
        "integer" => {
            let as_int = match n {
                Num::Int(i) => Some(i),
                Num::Float(f) if is_json_integer(f) && f.abs() < 9.2e18 => Some(f as i64),
                Num::Float(_) => None,
            };
            match (as_int, format) {
                (Some(i), "int32") => i32::try_from(i).is_ok(),
                (Some(_), _) => true,
                (None, _) => false,
            }
        }
        "number" if format == "float" => n.as_f64().abs() <= f64::from(f32::MAX),
        _ => true,
    }
}

/// kube-openapi's `multipleOf` check of `n` by `factor` (integers natively when the factor
/// fits the type), or its message.
fn multiple_of(n: Num, factor: f64, native: bool, path: &str) -> Option<String> {
    if let (Num::Int(i), true) = (n, native) {
        let f = factor as i64;
        if f <= 0 {
            return Some(format!(
                "factor MultipleOf declared for {path} must be positive: {f}"
            ));
        }
        return (i % f != 0).then(|| format!("{path} in body should be a multiple of {f}"));
    }
    if factor <= 0.0 {
        return Some(format!(
            "factor MultipleOf declared for {path} must be positive: {}",
            go_float(factor)
        ));
    }
    let data = n.as_f64();
    let mult = if factor < 1.0 {
        1.0 / factor * data
    } else {
        data / factor
    };
    (!is_json_integer(mult)).then(|| {
        format!(
            "{path} in body should be a multiple of {}",
            go_float(factor)
        )
    })
}
