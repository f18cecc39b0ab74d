//! JSONPath templates as client-go's `util/jsonpath` parses them (the language of a CRD's
//! `additionalPrinterColumns[].jsonPath`, wrapped in `{...}`): text and `{...}` actions made of
//! fields (`.a`, `.a\.b`), array slices (`[0]`, `[-1]`, `[0:2]`, `[::2]`, `[*]`), dictionary
//! keys (`['a']`), unions (`['a','b']`, `[0,2]`), filters (`[?(@.type=="Ready")]`, `[?(@.x)]`),
//! recursive descent (`..a`), wildcards (`.*`), quoted texts and number and boolean literals.
//!
//! The parser is a loop, not a recursion per token; nested templates (union members, keys,
//! filter operands) nest at most [`MAX_NESTING`] deep. Evaluation is in `jsonpath_eval`.

use super::jsonpath_eval::Evaluator;
use super::jsonpath_eval::Item;

/// How deep templates nest inside one another (client-go's own grammar nests at most four).
const MAX_NESTING: usize = 8;

/// Why a template does not parse (client-go's message, for diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ParseError(pub String);

/// One part of a template: literal text, or an action between braces.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Segment {
    /// Text printed as it is.
    Text(String),
    /// The nodes of one `{...}` action, applied in order.
    Action(Vec<Node>),
}

/// A slice bound (`ParamsEntry`): its value, whether it was written, and whether it was
/// derived from the start (the end of a plain index `[i]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Param {
    pub value: i64,
    pub known: bool,
    pub derived: bool,
}

/// How a filter tests each element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FilterOp {
    /// `[?(@.x)]`: the left side finds something.
    Exists,
    /// `[?(@.x<op>y)]`, with the operator as written (`==`, `!=`, `<`, `<=`, `>`, `>=`;
    /// any other run of `!<>=` fails when evaluated).
    Compare(String),
}

/// One step of an action.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    /// A quoted text literal.
    Text(String),
    /// A map key.
    Field(String),
    /// An array slice: start, end, step.
    Array([Param; 3]),
    /// A filter over an array's elements.
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: FilterOp,
    },
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `*`: every value of a map or an array.
    Wildcard,
    /// `..`: every container below, itself included.
    Recursive,
    /// `[a,b]`: the results of each member, in order.
    Union(Vec<Vec<Node>>),
    /// A keyword (`range`, `end`) or an unknown word.
    Identifier(String),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct JsonPath {
    segments: Vec<Segment>,
}

impl JsonPath {
    /// Parses `template` (text with `{...}` actions) as client-go does.
    pub(super) fn parse(template: &str) -> Result<Self, ParseError> {
        Self::parse_nested(template, 0)
    }

    fn parse_nested(template: &str, depth: usize) -> Result<Self, ParseError> {
        let mut parser = Parser {
            input: template,
            pos: 0,
            start: 0,
            width: 0,
            depth,
        };
        Ok(Self {
            segments: parser.template()?,
        })
    }

    /// The segments, in order.
    #[cfg(test)]
    pub(super) fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The first value the first segment finds in `data` (what a printer column shows), or
    /// `None` when it finds nothing or any segment fails (an index out of bounds, a filter on
    /// something else than an array, a comparison of unlike values, the evaluation budget).
    /// Missing keys find nothing rather than fail. `range` blocks are not evaluated: an
    /// action naming a keyword fails.
    pub(super) fn first<'a>(&'a self, data: &'a serde_json::Value) -> Option<Item<'a>> {
        let mut evaluator = Evaluator::default();
        let mut first = None;
        for (i, segment) in self.segments.iter().enumerate() {
            let results = match segment {
                Segment::Text(text) => vec![Item::Text(text)],
                Segment::Action(nodes) => evaluator.list(vec![Item::Json(data)], nodes).ok()?,
            };
            if i == 0 {
                first = results.first().copied();
            }
        }
        first
    }
}

/// The scanner state of client-go's parser: byte positions in the input.
struct Parser<'t> {
    input: &'t str,
    pos: usize,
    start: usize,
    width: usize,
    depth: usize,
}

impl Parser<'_> {
    fn next(&mut self) -> Option<char> {
        let c = self
            .input
            .get(self.pos..)
            .and_then(|rest| rest.chars().next());
        self.width = c.map_or(0, char::len_utf8);
        self.pos += self.width;
        c
    }

    fn backup(&mut self) {
        self.pos = self.pos.saturating_sub(self.width);
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn consume(&mut self) -> &str {
        let text = self.input.get(self.start..self.pos).unwrap_or_default();
        self.start = self.pos;
        text
    }

    fn rest(&self) -> &str {
        self.input.get(self.pos..).unwrap_or_default()
    }

    /// The byte two before the position (the one before the character just read).
    fn escaped(&self) -> bool {
        self.pos
            .checked_sub(2)
            .and_then(|i| self.input.as_bytes().get(i))
            == Some(&b'\\')
    }

    fn template(&mut self) -> Result<Vec<Segment>, ParseError> {
        let mut segments = Vec::new();
        loop {
            if self.rest().starts_with('{') {
                if self.pos > self.start {
                    segments.push(Segment::Text(self.consume().to_owned()));
                }
                self.pos += 1;
                self.consume();
                segments.push(Segment::Action(self.action()?));
                continue;
            }
            if self.next().is_none() {
                break;
            }
        }
        if self.pos > self.start {
            segments.push(Segment::Text(self.consume().to_owned()));
        }
        Ok(segments)
    }

    /// The nodes of an action, up to and including its closing brace.
    fn action(&mut self) -> Result<Vec<Node>, ParseError> {
        let mut nodes = Vec::new();
        loop {
            if self.rest().starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(nodes);
            }
            if self.rest().starts_with("[?(") {
                nodes.push(self.filter()?);
                continue;
            }
            if self.rest().starts_with("..") {
                if matches!(nodes.last(), Some(Node::Recursive)) {
                    return Err(error("invalid multiple recursive descent"));
                }
                self.pos += 2;
                self.consume();
                nodes.push(Node::Recursive);
                if self.peek().is_some_and(alphanumeric) {
                    nodes.push(self.field());
                }
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return Err(error("unclosed action")),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.array(&mut nodes)?,
                Some(quote @ ('"' | '\'')) => nodes.push(self.quote(quote)?),
                Some('.') => nodes.push(self.field()),
                Some(c) if c == '+' || c == '-' || digit(c) => {
                    self.backup();
                    nodes.push(self.number()?);
                }
                Some(c) if alphanumeric(c) => {
                    self.backup();
                    nodes.push(self.identifier());
                }
                Some(c) => {
                    return Err(error(&format!(
                        "unrecognized character in action: U+{:04X} {c:?}",
                        u32::from(c)
                    )));
                }
            }
        }
    }

    /// The nodes of `text` parsed as an action of its own.
    fn nested(&self, text: &str) -> Result<Vec<Node>, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(error("templates nest too deep"));
        }
        let parsed = JsonPath::parse_nested(&format!("{{{text}}}"), self.depth + 1)?;
        match parsed.segments.into_iter().next() {
            Some(Segment::Action(nodes)) => Ok(nodes),
            _ => Ok(Vec::new()),
        }
    }

    fn identifier(&mut self) -> Node {
        while !terminator(self.next()) {}
        self.backup();
        match self.consume() {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            word => Node::Identifier(word.to_owned()),
        }
    }

    fn number(&mut self) -> Result<Node, ParseError> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || digit(c) => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let text = self.consume();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Node::Int(i));
        }
        text.parse::<f64>()
            .map(Node::Float)
            .map_err(|_| error(&format!("cannot parse number {text}")))
    }

    fn array(&mut self, nodes: &mut Vec<Node>) -> Result<(), ParseError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err(error("unterminated array")),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let inner = text
            .get(1..text.len().saturating_sub(1))
            .unwrap_or_default();
        let inner = if inner == "*" { ":" } else { inner };
        let inner = inner.to_owned();
        if inner.contains(',') {
            let members = inner
                .split(',')
                .map(|member| self.nested(&format!("[{}]", member.trim_matches(' '))))
                .collect::<Result<Vec<_>, _>>()?;
            nodes.push(Node::Union(members));
            return Ok(());
        }
        if let Some(key) = inner
            .strip_prefix('\'')
            .and_then(|k| k.strip_suffix('\''))
            .filter(|k| !k.contains('\''))
        {
            nodes.extend(self.nested(&format!(".{key}"))?);
            return Ok(());
        }
        nodes.push(Node::Array(slice(&inner)?));
        Ok(())
    }

    fn filter(&mut self) -> Result<Node, ParseError> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end, mut pair) = (false, false, '"');
        loop {
            match self.next() {
                None | Some('\n') => return Err(error("unterminated filter")),
                Some(quote @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = quote;
                    } else if !self.escaped() && quote == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return Err(error("unclosed array expect ]"));
        }
        let text = self.consume();
        let text = text
            .get(..text.len().saturating_sub(2))
            .unwrap_or_default()
            .to_owned();
        Ok(match comparison(&text) {
            None => Node::Filter {
                left: self.nested(&text)?,
                right: Vec::new(),
                op: FilterOp::Exists,
            },
            Some((left, op, right)) => Node::Filter {
                left: self.nested(left)?,
                right: self.nested(right)?,
                op: FilterOp::Compare(op.to_owned()),
            },
        })
    }

    fn quote(&mut self, quote: char) -> Result<Node, ParseError> {
        loop {
            match self.next() {
                None | Some('\n') => return Err(error("unterminated quoted string")),
                Some(c) if c == quote && !self.escaped() => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        unquote(text)
            .map(Node::Text)
            .ok_or_else(|| error(&format!("unquote string {text} error invalid syntax")))
    }

    fn field(&mut self) -> Node {
        self.consume();
        loop {
            match self.next() {
                Some('\\') => {
                    self.next();
                }
                c if terminator(c) => {
                    self.backup();
                    break;
                }
                _ => {}
            }
        }
        match self.consume() {
            "*" => Node::Wildcard,
            name => Node::Field(name.replace('\\', "")),
        }
    }
}

fn error(message: &str) -> ParseError {
    ParseError(message.to_owned())
}

/// Whether `c` ends a field or a keyword.
fn terminator(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

/// A decimal digit (Go's `unicode.IsDigit`).
fn digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

/// A letter, a digit or `_` (what starts a keyword, or a field after `..`).
fn alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || digit(c)
}

/// The bounds of `[start:end:step]` (`^(-?\d*)(:-?\d*)?(:-?\d*)?$`), as client-go fills them.
fn slice(text: &str) -> Result<[Param; 3], ParseError> {
    let invalid = || error(&format!("invalid array index {text}"));
    let mut parts = text.splitn(3, ':');
    let first = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    let bound = |s: &str| {
        let digits = s.strip_prefix('-').unwrap_or(s);
        digits.bytes().all(|b| b.is_ascii_digit())
    };
    if !bound(first) || rest.iter().any(|s| !bound(s)) {
        return Err(invalid());
    }
    let mut params = [Param::default(); 3];
    let written = [Some(first), rest.first().copied(), rest.get(1).copied()];
    for (i, part) in written.into_iter().enumerate() {
        let number = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| error(&format!("array index {s} is not a number")))
        };
        params[i] = match part {
            Some(s) if i == 0 && !s.is_empty() => Param {
                value: number(s)?,
                known: true,
                derived: false,
            },
            Some(s) if i > 0 => {
                if s.is_empty() {
                    Param::default()
                } else {
                    Param {
                        value: number(s)?,
                        known: true,
                        derived: false,
                    }
                }
            }
            _ if i == 1 => Param {
                value: params[0].value.saturating_add(1),
                known: true,
                derived: true,
            },
            _ => Param::default(),
        };
    }
    Ok(params)
}

/// A filter's text split as `^([^!<>=]+)([!<>=]+)(.+?)$` splits it: left operand, operator
/// and right operand; `None` for an existence test.
fn comparison(text: &str) -> Option<(&str, &str, &str)> {
    let operator = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let at = text.find(operator)?;
    if at == 0 {
        return None;
    }
    let run = text[at..]
        .find(|c: char| !operator(c))
        .unwrap_or(text.len() - at);
    let (op_end, right_start) = if at + run < text.len() {
        (at + run, at + run)
    } else if run >= 2 {
        (at + run - 1, at + run - 1)
    } else {
        return None;
    };
    Some((&text[..at], &text[at..op_end], &text[right_start..]))
}

/// A quoted literal (`"..."` or `'...'`) with Go's escapes; `None` when malformed.
fn unquote(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|q| *q == '"' || *q == '\'')?;
    let body = text.strip_prefix(quote)?.strip_suffix(quote)?;
    if !body.contains('\\') && !body.contains(quote) {
        return Some(body.to_owned());
    }
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let escape = chars.next()?;
        let simple = match escape {
            'a' => Some(0x07),
            'b' => Some(0x08),
            'f' => Some(0x0c),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(0x0b),
            '\\' => Some(b'\\'),
            '\'' | '"' if escape == quote => Some(escape as u8),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
            continue;
        }
        match escape {
            'x' => out.push(u8::try_from(hex(&mut chars, 2)?).ok()?),
            'u' | 'U' => {
                let rune = char::from_u32(hex(&mut chars, if escape == 'u' { 4 } else { 8 })?)?;
                let mut buf = [0; 4];
                out.extend_from_slice(rune.encode_utf8(&mut buf).as_bytes());
            }
            '0'..='7' => {
                let mut value = escape.to_digit(8)?;
                for _ in 0..2 {
                    value = value * 8 + chars.next()?.to_digit(8)?;
                }
                out.push(u8::try_from(value).ok()?);
            }
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `n` hexadecimal digits from `chars`.
fn hex(chars: &mut std::str::Chars<'_>, n: usize) -> Option<u32> {
    let mut value = 0u32;
    for _ in 0..n {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    Some(value)
}

#[cfg(test)]
#[path = "jsonpath_tests.rs"]
mod tests;
