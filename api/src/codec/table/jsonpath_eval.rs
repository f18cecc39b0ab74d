//! Evaluation of parsed JSONPath actions on a JSON value, as client-go's `util/jsonpath`
//! evaluates them on an unstructured object with missing keys allowed: what each node finds,
//! and which inputs make it fail (and so print an empty cell).
//!
//! Every item found, every value visited by a recursive descent or a filter and every input
//! copied for a union member spends one unit of a budget ([`BUDGET`]); an evaluation that runs out fails, so no template can make a replica
//! do more than a bounded amount of work per cell.

use std::cmp::Ordering;

use serde_json::Value;

use super::jsonpath::FilterOp;
use super::jsonpath::Node;
use super::jsonpath::Param;

/// The most items one evaluation may find and visit.
pub(super) const BUDGET: usize = 1 << 19;

/// One value found: a JSON value of the object, a byte of a string (a wildcard over a
/// string), or a literal of the template.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Item<'a> {
    /// A value of the object.
    Json(&'a Value),
    /// One byte of a string.
    Byte(u8),
    /// A quoted text of the template.
    Text(&'a str),
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// A boolean literal.
    Bool(bool),
}

/// Why an evaluation stopped.
#[derive(Debug)]
pub(super) enum Failure<'a> {
    /// A step failed; client-go hands back these values with its error (an existence
    /// filter still counts them).
    Error(Vec<Item<'a>>),
    /// The budget ran out.
    Exhausted,
}

type Found<'a> = Result<Vec<Item<'a>>, Failure<'a>>;

/// Evaluates actions, spending one budget across all of them.
#[derive(Debug)]
pub(super) struct Evaluator {
    left: usize,
}

impl Default for Evaluator {
    fn default() -> Self {
        Self { left: BUDGET }
    }
}

impl Evaluator {
    fn spend(&mut self) -> Result<(), Failure<'static>> {
        self.spend_n(1)
    }

    fn spend_n(&mut self, n: usize) -> Result<(), Failure<'static>> {
        self.left = self.left.checked_sub(n).ok_or(Failure::Exhausted)?;
        Ok(())
    }

    fn push<'a>(&mut self, out: &mut Vec<Item<'a>>, item: Item<'a>) -> Result<(), Failure<'a>> {
        self.spend()?;
        out.push(item);
        Ok(())
    }

    /// The nodes applied in order to `input`.
    pub(super) fn list<'a>(&mut self, input: Vec<Item<'a>>, nodes: &'a [Node]) -> Found<'a> {
        let mut current = input;
        for node in nodes {
            current = self.walk(current, node)?;
        }
        Ok(current)
    }

    fn walk<'a>(&mut self, input: Vec<Item<'a>>, node: &'a Node) -> Found<'a> {
        match node {
            Node::Text(text) => {
                let mut out = Vec::new();
                self.push(&mut out, Item::Text(text))?;
                Ok(out)
            }
            Node::Field(name) => self.field(&input, name),
            Node::Array(params) => self.array(input, params),
            Node::Filter { left, right, op } => self.filter(input, left, right, op),
            Node::Int(v) => self.each(&input, Item::Int(*v)),
            Node::Float(v) => self.each(&input, Item::Float(*v)),
            Node::Bool(v) => self.each(&input, Item::Bool(*v)),
            Node::Wildcard => self.wildcard(&input),
            Node::Recursive => self.recursive(&input),
            Node::Union(members) => {
                let mut out = Vec::new();
                for member in members {
                    self.spend_n(input.len())?;
                    match self.list(input.clone(), member) {
                        Ok(found) => {
                            for item in found {
                                self.push(&mut out, item)?;
                            }
                        }
                        Err(Failure::Error(_)) => return Err(Failure::Error(input)),
                        Err(Failure::Exhausted) => return Err(Failure::Exhausted),
                    }
                }
                Ok(out)
            }
            Node::Identifier(word) if word == "end" => Err(Failure::Error(Vec::new())),
            Node::Identifier(_) => Err(Failure::Error(input)),
        }
    }

    /// `literal` once per input.
    fn each<'a>(&mut self, input: &[Item<'a>], literal: Item<'a>) -> Found<'a> {
        let mut out = Vec::with_capacity(input.len());
        for _ in input {
            self.push(&mut out, literal)?;
        }
        Ok(out)
    }

    fn field<'a>(&mut self, input: &[Item<'a>], name: &str) -> Found<'a> {
        let mut out = Vec::new();
        for item in input {
            if let Item::Json(Value::Object(map)) = item
                && let Some(value) = map.get(name)
            {
                self.push(&mut out, Item::Json(value))?;
            }
        }
        Ok(out)
    }

    fn array<'a>(&mut self, input: Vec<Item<'a>>, params: &[Param; 3]) -> Found<'a> {
        let mut out = Vec::new();
        for item in &input {
            let array = match item {
                Item::Json(Value::Null) => continue,
                Item::Json(Value::Array(array)) => array,
                _ => return Err(Failure::Error(input)),
            };
            let len = i64::try_from(array.len()).unwrap_or(i64::MAX);
            let mut p = *params;
            if !p[0].known {
                p[0].value = 0;
            }
            if p[0].value < 0 {
                p[0].value = p[0].value.saturating_add(len);
            }
            if !p[1].known {
                p[1].value = len;
            }
            if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
                p[1].value = p[1].value.saturating_add(len);
            }
            if p[1].value == p[0].value {
                return Ok(out);
            }
            let (Ok(start), Ok(end)) = (usize::try_from(p[0].value), usize::try_from(p[1].value))
            else {
                return Err(Failure::Error(input));
            };
            if start >= array.len() || end > array.len() || start > end {
                return Err(Failure::Error(input));
            }
            let step = if p[2].known {
                match usize::try_from(p[2].value) {
                    Ok(step) if step > 0 => step,
                    _ => return Err(Failure::Error(input)),
                }
            } else {
                1
            };
            for value in array[start..end].iter().step_by(step) {
                self.push(&mut out, Item::Json(value))?;
            }
        }
        Ok(out)
    }

    fn filter<'a>(
        &mut self,
        input: Vec<Item<'a>>,
        left: &'a [Node],
        right: &'a [Node],
        op: &FilterOp,
    ) -> Found<'a> {
        let mut out = Vec::new();
        for item in &input {
            let Item::Json(Value::Array(array)) = item else {
                return Err(Failure::Error(input));
            };
            for element in array {
                self.spend()?;
                let lefts = self.list(vec![Item::Json(element)], left);
                let FilterOp::Compare(op) = op else {
                    match lefts {
                        Ok(found) | Err(Failure::Error(found)) if !found.is_empty() => {
                            self.push(&mut out, Item::Json(element))?;
                        }
                        Err(Failure::Exhausted) => return Err(Failure::Exhausted),
                        _ => {}
                    }
                    continue;
                };
                let Some(l) = operand(lefts, &input)? else {
                    continue;
                };
                let rights = self.list(vec![Item::Json(element)], right);
                let Some(r) = operand(rights, &input)? else {
                    continue;
                };
                match compare(op, l, r) {
                    Some(true) => self.push(&mut out, Item::Json(element))?,
                    Some(false) => {}
                    None => return Err(Failure::Error(out)),
                }
            }
        }
        Ok(out)
    }

    fn wildcard<'a>(&mut self, input: &[Item<'a>]) -> Found<'a> {
        let mut out = Vec::new();
        for item in input {
            match item {
                Item::Json(Value::Object(map)) => {
                    for value in map.values() {
                        self.push(&mut out, Item::Json(value))?;
                    }
                }
                Item::Json(Value::Array(array)) => {
                    for value in array {
                        self.push(&mut out, Item::Json(value))?;
                    }
                }
                Item::Json(Value::String(text)) => {
                    for byte in text.bytes() {
                        self.push(&mut out, Item::Byte(byte))?;
                    }
                }
                Item::Text(text) => {
                    for byte in text.bytes() {
                        self.push(&mut out, Item::Byte(byte))?;
                    }
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Every value below each input that has children (maps, arrays, non-empty strings),
    /// the input first, depth first in document order.
    fn recursive<'a>(&mut self, input: &[Item<'a>]) -> Found<'a> {
        let mut out = Vec::new();
        for item in input {
            match item {
                Item::Json(value) => {
                    let mut stack = vec![*value];
                    while let Some(value) = stack.pop() {
                        self.spend()?;
                        match value {
                            Value::Object(map) if !map.is_empty() => {
                                self.push(&mut out, Item::Json(value))?;
                                stack.extend(map.values().rev());
                            }
                            Value::Array(array) if !array.is_empty() => {
                                self.push(&mut out, Item::Json(value))?;
                                stack.extend(array.iter().rev());
                            }
                            Value::String(text) if !text.is_empty() => {
                                self.push(&mut out, Item::Json(value))?;
                            }
                            _ => {}
                        }
                    }
                }
                Item::Text(text) if !text.is_empty() => self.push(&mut out, *item)?,
                _ => {}
            }
        }
        Ok(out)
    }
}

/// The single value one side of a comparison found (`None`: it found nothing, and the
/// element is skipped); more than one fails.
fn operand<'a>(found: Found<'a>, input: &[Item<'a>]) -> Result<Option<Item<'a>>, Failure<'a>> {
    match found {
        Ok(found) if found.len() > 1 => Err(Failure::Error(input.to_vec())),
        Ok(found) => Ok(found.first().copied()),
        Err(Failure::Error(_)) => Err(Failure::Error(input.to_vec())),
        Err(Failure::Exhausted) => Err(Failure::Exhausted),
    }
}

/// A value as Go's template comparisons see it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a str),
}

impl<'a> Basic<'a> {
    /// `None` for values that cannot be compared (null, maps, arrays).
    fn of(item: Item<'a>) -> Option<Self> {
        Some(match item {
            Item::Json(Value::Bool(b)) => Self::Bool(*b),
            Item::Bool(b) => Self::Bool(b),
            Item::Json(Value::Number(n)) => match n.as_i64() {
                Some(i) => Self::Int(i),
                None => Self::Float(n.as_f64()?),
            },
            Item::Json(Value::String(s)) => Self::Str(s),
            Item::Json(_) => return None,
            Item::Byte(b) => Self::Uint(u64::from(b)),
            Item::Text(s) => Self::Str(s),
            Item::Int(i) => Self::Int(i),
            Item::Float(f) => Self::Float(f),
        })
    }
}

/// `left == right` (`None`: not comparable).
fn equal(left: Basic<'_>, right: Basic<'_>) -> Option<bool> {
    Some(match (left, right) {
        (Basic::Bool(a), Basic::Bool(b)) => a == b,
        (Basic::Int(a), Basic::Int(b)) => a == b,
        (Basic::Uint(a), Basic::Uint(b)) => a == b,
        (Basic::Float(a), Basic::Float(b)) => a == b,
        (Basic::Str(a), Basic::Str(b)) => a == b,
        (Basic::Int(a), Basic::Uint(b)) => u64::try_from(a).is_ok_and(|a| a == b),
        (Basic::Uint(a), Basic::Int(b)) => u64::try_from(b).is_ok_and(|b| a == b),
        _ => return None,
    })
}

/// `left < right` (`None`: not comparable, or booleans).
fn less(left: Basic<'_>, right: Basic<'_>) -> Option<bool> {
    Some(match (left, right) {
        (Basic::Int(a), Basic::Int(b)) => a < b,
        (Basic::Uint(a), Basic::Uint(b)) => a < b,
        (Basic::Float(a), Basic::Float(b)) => a.partial_cmp(&b) == Some(Ordering::Less),
        (Basic::Str(a), Basic::Str(b)) => a < b,
        (Basic::Int(a), Basic::Uint(b)) => u64::try_from(a).map_or(true, |a| a < b),
        (Basic::Uint(a), Basic::Int(b)) => u64::try_from(b).is_ok_and(|b| a < b),
        _ => return None,
    })
}

/// Whether `left <op> right` holds (`None`: an unknown operator or values that cannot be
/// compared, which fails the filter).
fn compare(op: &str, left: Item<'_>, right: Item<'_>) -> Option<bool> {
    let (l, r) = (Basic::of(left)?, Basic::of(right)?);
    let less_equal = || match less(l, r)? {
        true => Some(true),
        false => equal(l, r),
    };
    match op {
        "==" => equal(l, r),
        "!=" => equal(l, r).map(|e| !e),
        "<" => less(l, r),
        "<=" => less_equal(),
        ">" => less_equal().map(|le| !le),
        ">=" => less(l, r).map(|lt| !lt),
        _ => None,
    }
}
