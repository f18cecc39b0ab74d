//! The `fieldsV1` form of a [`Set`], byte for byte as Kubernetes writes it: a JSON object whose
//! keys are `f:<field>`, `k:<key fields as JSON>`, `v:<value as JSON>` and `i:<index>`, each
//! holding the paths below it, with `".": {}` where the element itself is in the set too; keys
//! in structured-merge-diff's element order.

use serde_json::Map;
use serde_json::Value;

use super::PathElement;
use super::Set;

/// The key of a path that continues below an element that is itself in the set.
const SELF: &str = ".";

/// `set` as a `fieldsV1` object.
pub fn encode(set: &Set) -> Value {
    Value::Object(encode_level(set))
}

fn encode_level(set: &Set) -> Map<String, Value> {
    let mut out = Map::new();
    let mut members = set.members().peekable();
    let mut children = set.children().peekable();
    loop {
        let next_member = members.peek().copied();
        let next_child = children.peek().map(|(e, _)| *e);
        let element = match (next_member, next_child) {
            (None, None) => return out,
            (Some(m), Some(c)) => m.min(c),
            (Some(m), None) => m,
            (None, Some(c)) => c,
        };
        let is_member = next_member == Some(element);
        if is_member {
            members.next();
        }
        let mut below = Map::new();
        if next_child == Some(element)
            && let Some((_, child)) = children.next()
        {
            let inner = encode_level(child);
            if !inner.is_empty() {
                if is_member {
                    below.insert(SELF.to_owned(), Value::Object(Map::new()));
                }
                below.extend(inner);
            }
        }
        out.insert(key_of(element), Value::Object(below));
    }
}

/// The `fieldsV1` key of `element`.
pub fn key_of(element: &PathElement) -> String {
    match element {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Key(fields) => {
            let object: Map<String, Value> = fields.iter().cloned().collect();
            format!("k:{}", Value::Object(object))
        }
        PathElement::Value(value) => format!("v:{value}"),
        PathElement::Index(i) => format!("i:{i}"),
    }
}

/// The set a `fieldsV1` object describes; the error says which key is wrong. The object is
/// walked as deep as it nests, which its parser bounded.
pub fn decode(fields: &Value) -> Result<Set, String> {
    let Value::Object(map) = fields else {
        return Err("fieldsV1 must be an object".to_owned());
    };
    let mut set = Set::new();
    decode_level(map, &mut Vec::new(), &mut set)?;
    Ok(set)
}

fn decode_level(
    map: &Map<String, Value>,
    prefix: &mut Vec<PathElement>,
    set: &mut Set,
) -> Result<(), String> {
    for (key, below) in map {
        let Value::Object(below) = below else {
            return Err(format!("the value of {key:?} must be an object"));
        };
        if key == SELF {
            if prefix.is_empty() {
                return Err("\".\" is not allowed at the top level".to_owned());
            }
            set.insert(prefix);
            continue;
        }
        prefix.push(element_of(key)?);
        if below.is_empty() {
            set.insert(prefix);
        } else {
            decode_level(below, prefix, set)?;
        }
        prefix.pop();
    }
    Ok(())
}

/// The element a `fieldsV1` key names.
pub fn element_of(key: &str) -> Result<PathElement, String> {
    let invalid = |why: &str| format!("invalid field key {key:?}: {why}");
    let (kind, rest) = key
        .split_once(':')
        .ok_or_else(|| invalid("no type prefix"))?;
    match kind {
        "f" => Ok(PathElement::Field(rest.to_owned())),
        "k" => match serde_json::from_str::<Value>(rest) {
            Ok(Value::Object(fields)) => {
                let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(PathElement::Key(fields))
            }
            _ => Err(invalid("the key fields must be a JSON object")),
        },
        "v" => serde_json::from_str(rest)
            .map(PathElement::Value)
            .map_err(|_| invalid("the value must be JSON")),
        "i" => rest
            .parse()
            .map(PathElement::Index)
            .map_err(|_| invalid("the index must be a number")),
        _ => Err(invalid("unknown type prefix")),
    }
}
