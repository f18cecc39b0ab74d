//! RFC 6902 JSON Patch (R-RES-114): a list of operations (`add`, `remove`, `replace`,
//! `move`, `copy`, `test`), applied in order, all or none; a failing `test` fails the patch
//! (R-RES-115). Errors are worded as Kubernetes' JSON Patch library words them.
//!
//! Budgets, kept as the operations apply (a refused patch leaves nothing, as any failed
//! one): at most [`MAX_JSON_PATCH_OPERATIONS`] operations (counted before any applies),
//! [`JSON_PATCH_MAX_COPY_BYTES`] bytes copied, [`JSON_PATCH_MAX_SHIFTS`] list items and map
//! entries shifted, and no value nested deeper than [`MAX_NESTING_DEPTH`] (checked before
//! the value is inserted). The document is never deeper than that, so a value found at a
//! path of `n` tokens nests at most `MAX_NESTING_DEPTH - n` deep: a `move` or `copy` to a
//! path no longer than its `from` needs no measuring.

use std::borrow::Cow;
use std::io;

use serde_json::Map;
use serde_json::Value;

use super::PatchError;
use super::json_pointer::get;
use super::json_pointer::get_mut;
use super::json_pointer::index;
use super::json_pointer::tokens;
use super::parse;
use super::too_deep;
use crate::error::excerpt;
use crate::limits::MAX_NESTING_DEPTH;

/// The most operations a JSON Patch may hold: Kubernetes' `maxJSONPatchOperations`
/// (k8s.io/apiserver endpoints/handlers/patch.go), answered 413 before any is applied.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The most bytes a JSON Patch's `copy` operations may copy in total, each counted as the
/// length of the copied value's JSON text: Kubernetes' `JSONPatchMaxCopyBytes`
/// (k8s.io/apiserver server/config.go: twice etcd's 1.5 MiB request limit), which it hands to
/// json-patch as `AccumulatedCopySizeLimit`.
pub const JSON_PATCH_MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// The most list items and map entries a JSON Patch's operations may shift in total, with
/// the values walked to measure the depth of what they insert. Inserting into or
/// removing from a list (or a map, whose order is kept) shifts what follows, so 10,000
/// operations at the front of a list of a million items would shift ten billion. Kubernetes
/// has no such budget (its library copies the list on each such operation instead); this one
/// allows 10,000 operations on lists of 6,700 items, and bounds a hostile patch to a second
/// or two of work (measured: removing keys from the front of a 100,000-key map).
pub const JSON_PATCH_MAX_SHIFTS: usize = 1 << 26;

/// `current` with the operations of `body` applied.
pub(super) fn apply(current: Value, body: &[u8]) -> Result<Value, PatchError> {
    let operations = read_operations(body)?;
    let mut patcher = Patcher {
        doc: current,
        copied: 0,
        shifted: 0,
    };
    for operation in operations {
        patcher.apply(operation)?;
    }
    Ok(patcher.doc)
}

/// The operations of `body`, refused whole (400) when it is not a list of objects, as
/// Kubernetes' decoding of a patch refuses it, or 413 when there are too many of them.
fn read_operations(body: &[u8]) -> Result<Vec<Value>, PatchError> {
    let patch = parse(body, |e| PatchError::Malformed(e.to_string()))?;
    let operations = match patch {
        Value::Array(operations) => operations,
        Value::Null => Vec::new(),
        other => return Err(cannot_unmarshal(&other, "jsonpatch.Patch")),
    };
    if let Some(other) = operations
        .iter()
        .find(|op| !(op.is_object() || op.is_null()))
    {
        return Err(cannot_unmarshal(other, "jsonpatch.Operation"));
    }
    if operations.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooManyOperations(operations.len()));
    }
    Ok(operations)
}

/// Go's JSON decoder refusing `value` for a `target` type.
fn cannot_unmarshal(value: &Value, target: &str) -> PatchError {
    let kind = match value {
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    };
    PatchError::Malformed(format!(
        "json: cannot unmarshal {kind} into Go value of type {target}"
    ))
}

/// The kinds of operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Remove => "remove",
            Self::Replace => "replace",
            Self::Move => "move",
            Self::Copy => "copy",
            Self::Test => "test",
        }
    }
}

/// One operation, read from its object.
struct Operation {
    kind: Kind,
    op: Map<String, Value>,
}

impl Operation {
    fn read(op: Value) -> Result<Self, PatchError> {
        let op = match op {
            Value::Object(op) => op,
            _ => Map::new(),
        };
        let kind = match op.get("op").and_then(Value::as_str) {
            Some("add") => Kind::Add,
            Some("remove") => Kind::Remove,
            Some("replace") => Kind::Replace,
            Some("move") => Kind::Move,
            Some("copy") => Kind::Copy,
            Some("test") => Kind::Test,
            other => {
                let kind = excerpt(other.unwrap_or("unknown"));
                return Err(PatchError::NotApplicable(format!(
                    "Unexpected kind: {kind}"
                )));
            }
        };
        Ok(Self { kind, op })
    }

    /// The string field `field` (`path` or `from`).
    fn pointer(&mut self, field: &str) -> Result<String, PatchError> {
        match self.op.remove(field) {
            Some(Value::String(pointer)) => Ok(pointer),
            _ => Err(self.fail(format!("failed to decode {field}"))),
        }
    }

    fn value(&mut self) -> Result<Value, PatchError> {
        self.op
            .remove("value")
            .ok_or_else(|| self.fail("failed to decode value: missing value".to_owned()))
    }

    /// `<kind> operation <what>`, a 422.
    fn fail(&self, what: String) -> PatchError {
        PatchError::NotApplicable(format!("{} operation {what}", self.kind.name()))
    }

    fn missing(&self, which: &str, pointer: &str) -> PatchError {
        self.fail(format!(
            "does not apply: doc is missing {which}: \"{}\"",
            excerpt(pointer)
        ))
    }
}

/// The document being patched and the budgets spent so far.
struct Patcher {
    doc: Value,
    copied: usize,
    shifted: usize,
}

impl Patcher {
    fn apply(&mut self, op: Value) -> Result<(), PatchError> {
        let mut op = Operation::read(op)?;
        let path = op.pointer("path")?;
        let at = tokens(&path).ok_or_else(|| op.missing("path", &path))?;
        match op.kind {
            Kind::Add | Kind::Replace => {
                let value = op.value()?;
                self.check_depth(&op, &value, None, &at, &path)?;
                if op.kind == Kind::Add {
                    self.add(&op, &at, &path, value)
                } else {
                    self.replace(&op, &at, &path, value)
                }
            }
            Kind::Remove => self.remove(&op, &at, &path).map(drop),
            Kind::Test => {
                let value = op.value()?;
                match get(&self.doc, &at) {
                    Some(found) if *found == value => Ok(()),
                    Some(_) => Err(PatchError::NotApplicable(format!(
                        "testing value {} failed: test failed",
                        excerpt(&path)
                    ))),
                    None => Err(op.fail(format!(
                        "does not apply: is missing path: {}",
                        excerpt(&path)
                    ))),
                }
            }
            Kind::Move | Kind::Copy => {
                let from = op.pointer("from")?;
                let source = tokens(&from).ok_or_else(|| op.missing("from path", &from))?;
                if op.kind == Kind::Move && source.len() < at.len() && at.starts_with(&source) {
                    return Err(op.fail(format!(
                        "does not apply: \"{}\" cannot be moved into itself (\"{}\")",
                        excerpt(&from),
                        excerpt(&path)
                    )));
                }
                let value = if op.kind == Kind::Move {
                    self.remove(&op, &source, &from)?
                } else {
                    self.copy_of(&op, &source, &from)?
                };
                self.check_depth(&op, &value, Some(source.len()), &at, &path)?;
                if get(&self.doc, parent(&at)).is_none() {
                    return Err(op.missing("destination path", &path));
                }
                self.add(&op, &at, &path, value)
            }
        }
    }

    /// Refuses `value` at `at` when it would nest deeper than [`MAX_NESTING_DEPTH`]; `from`
    /// is the length of the path it was found at, if it is the document's.
    fn check_depth(
        &mut self,
        op: &Operation,
        value: &Value,
        from: Option<usize>,
        at: &[Cow<'_, str>],
        path: &str,
    ) -> Result<(), PatchError> {
        if from.is_some_and(|from| at.len() <= from) {
            return Ok(());
        }
        let room = MAX_NESTING_DEPTH.saturating_sub(at.len());
        if self.nests_deeper(op, value, room)? {
            return Err(too_deep(&format!(
                "{} operation does not apply: the value at \"{}\"",
                op.kind.name(),
                excerpt(path)
            )));
        }
        Ok(())
    }

    /// Whether `value` nests deeper than `room`, walked without recursion and stopping at the
    /// first level past it; the values walked count against the shift budget.
    fn nests_deeper(
        &mut self,
        op: &Operation,
        value: &Value,
        room: usize,
    ) -> Result<bool, PatchError> {
        let mut pending = vec![(value, 0usize)];
        while let Some((value, above)) = pending.pop() {
            self.shift(op, 1)?;
            let children: Box<dyn Iterator<Item = &Value>> = match value {
                Value::Object(map) => Box::new(map.values()),
                Value::Array(items) => Box::new(items.iter()),
                _ => continue,
            };
            if above + 1 > room {
                return Ok(true);
            }
            pending.extend(children.map(|child| (child, above + 1)));
        }
        Ok(false)
    }

    /// Spends `count` of the shift budget.
    fn shift(&mut self, op: &Operation, count: usize) -> Result<(), PatchError> {
        self.shifted = self.shifted.saturating_add(count);
        if self.shifted > JSON_PATCH_MAX_SHIFTS {
            return Err(op.fail(format!(
                "does not apply: the patch shifts or walks more than {JSON_PATCH_MAX_SHIFTS} list items and map entries"
            )));
        }
        Ok(())
    }

    /// A copy of the value at `source`, its JSON length counted against the copy budget
    /// before anything is copied (as upstream counts it: the whole length, so the error
    /// says how far past the budget the patch went).
    fn copy_of(
        &mut self,
        op: &Operation,
        source: &[Cow<'_, str>],
        from: &str,
    ) -> Result<Value, PatchError> {
        let value = get(&self.doc, source).ok_or_else(|| op.missing("from path", from))?;
        let mut counted = Counter(0);
        // Writing a value to a counter cannot fail.
        let _ = serde_json::to_writer(&mut counted, value);
        self.copied = self.copied.saturating_add(counted.0);
        if self.copied > JSON_PATCH_MAX_COPY_BYTES {
            return Err(PatchError::NotApplicable(format!(
                "Unable to complete the copy, the accumulated size increase of copy is {}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}",
                self.copied
            )));
        }
        Ok(value.clone())
    }

    fn add(
        &mut self,
        op: &Operation,
        at: &[Cow<'_, str>],
        path: &str,
        value: Value,
    ) -> Result<(), PatchError> {
        let Some((last, _)) = at.split_last() else {
            self.doc = value;
            return Ok(());
        };
        let parent = get_mut(&mut self.doc, parent(at)).ok_or_else(|| op.missing("path", path))?;
        match parent {
            Value::Object(map) => {
                map.insert(last.clone().into_owned(), value);
                Ok(())
            }
            Value::Array(items) => {
                let Some(i) = index(last, items.len(), true) else {
                    return Err(invalid_index(op, path, last));
                };
                let after = items.len() - i;
                items.insert(i, value);
                self.shift(op, after)
            }
            _ => Err(op.missing("path", path)),
        }
    }

    fn replace(
        &mut self,
        op: &Operation,
        at: &[Cow<'_, str>],
        path: &str,
        value: Value,
    ) -> Result<(), PatchError> {
        let slot = get_mut(&mut self.doc, at).ok_or_else(|| op.missing("key", path))?;
        *slot = value;
        Ok(())
    }

    /// Removes and answers the value at `at`.
    fn remove(
        &mut self,
        op: &Operation,
        at: &[Cow<'_, str>],
        path: &str,
    ) -> Result<Value, PatchError> {
        let which = if op.kind == Kind::Move {
            "from path"
        } else {
            "path"
        };
        let Some((last, _)) = at.split_last() else {
            return Err(op.missing(which, path));
        };
        let parent = get_mut(&mut self.doc, parent(at)).ok_or_else(|| op.missing(which, path))?;
        let (removed, shifted) = match parent {
            Value::Object(map) => {
                let len = map.len();
                let removed = map.shift_remove(last.as_ref()).ok_or_else(|| {
                    PatchError::NotApplicable(format!(
                        "error in {} for path: '{}': Unable to remove nonexistent key: {}: missing value",
                        op.kind.name(),
                        excerpt(path),
                        excerpt(last)
                    ))
                })?;
                (removed, len)
            }
            Value::Array(items) => {
                let Some(i) = index(last, items.len(), false) else {
                    return Err(invalid_index(op, path, last));
                };
                (items.remove(i), items.len() - i)
            }
            _ => return Err(op.missing(which, path)),
        };
        self.shift(op, shifted)?;
        Ok(removed)
    }
}

/// The tokens of the parent of `at` (which is not the root).
fn parent<'t, 'p>(at: &'t [Cow<'p, str>]) -> &'t [Cow<'p, str>] {
    at.split_last().map_or(at, |(_, parent)| parent)
}

fn invalid_index(op: &Operation, path: &str, token: &str) -> PatchError {
    PatchError::NotApplicable(format!(
        "error in {} for path: '{}': Unable to access invalid index: {}: invalid index referenced",
        op.kind.name(),
        excerpt(path),
        excerpt(token)
    ))
}

/// Counts the bytes written to it.
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
