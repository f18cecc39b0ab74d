//! The text Go prints for a JSON value found by a JSONPath, as a `string` printer column shows
//! it: client-go's `PrintResults` writes maps and arrays with `encoding/json` (keys sorted,
//! HTML characters escaped, floats without a needless exponent) and anything else with
//! `fmt`'s `%v` (floats in the shortest form, with an exponent from 1e+06 up and below
//! 1e-04; null as `<no value>`).

use std::fmt::Write;

use serde_json::Value;

use super::jsonpath_eval::Item;

/// How deep a value may nest to be written (deeper ones print no cell).
const MAX_DEPTH: usize = 512;

/// `item` as client-go prints one result; `None` when it cannot be written.
pub(super) fn print(item: Item<'_>) -> Option<String> {
    Some(match item {
        Item::Json(value @ (Value::Object(_) | Value::Array(_))) => {
            let mut out = String::new();
            json(value, &mut out, 0)?;
            out
        }
        Item::Json(Value::String(text)) => text.clone(),
        Item::Json(Value::Number(n)) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => verb_v(n.as_f64()?),
        },
        Item::Json(Value::Bool(b)) => b.to_string(),
        Item::Bool(b) => b.to_string(),
        Item::Json(Value::Null) => "<no value>".to_owned(),
        Item::Byte(b) => b.to_string(),
        Item::Text(text) => text.to_owned(),
        Item::Int(i) => i.to_string(),
        Item::Float(f) => verb_v(f),
    })
}

/// The shortest decimal digits of `f`'s magnitude and the position of its decimal point
/// (`digits` × 10^(`point` − len)); `("0", 1)` for zero.
fn shortest(f: f64) -> (String, i32) {
    let scientific = format!("{:e}", f.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    (digits, exponent + 1)
}

/// `f` in `%f` form with its shortest digits.
fn fixed(f: f64) -> String {
    let (digits, point) = shortest(f);
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let len = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let zeros = |n: i32| "0".repeat(usize::try_from(n).unwrap_or(0));
    if point <= 0 {
        format!("{sign}0.{}{digits}", zeros(-point))
    } else if point >= len {
        format!("{sign}{digits}{}", zeros(point - len))
    } else {
        let (int, frac) = digits.split_at(usize::try_from(point).unwrap_or(0));
        format!("{sign}{int}.{frac}")
    }
}

/// `f` in `%e` form with its shortest digits and at least `min_exponent_digits` exponent
/// digits.
fn exponent(f: f64, min_exponent_digits: usize) -> String {
    let (digits, point) = shortest(f);
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let (first, rest) = digits.split_at(1.min(digits.len()));
    let mantissa = if rest.is_empty() {
        first.to_owned()
    } else {
        format!("{first}.{rest}")
    };
    let e = point - 1;
    let e_sign = if e < 0 { '-' } else { '+' };
    format!(
        "{sign}{mantissa}e{e_sign}{:0width$}",
        e.unsigned_abs(),
        width = min_exponent_digits
    )
}

/// `fmt.Sprint(f)`: `%g` with the shortest digits, an exponent when it is below -4 or at
/// least 6 (`1e+06`, `1.5e-05`).
pub(super) fn verb_v(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let (_, point) = shortest(f);
    let e = point - 1;
    if !(-4..6).contains(&e) {
        exponent(f, 2)
    } else {
        fixed(f)
    }
}

/// A float as `encoding/json` writes it: plain from 1e-6 up to 1e21, else with an exponent
/// (`1e+21`, `1e-7`).
fn json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        exponent(f, 1)
    } else if abs == 0.0 {
        if f.is_sign_negative() { "-0" } else { "0" }.to_owned()
    } else {
        fixed(f)
    }
}

/// `value` as `json.Marshal` writes it (maps with their keys sorted).
fn json(value: &Value, out: &mut String, depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => out.push_str(&json_float(n.as_f64()?)),
        },
        Value::String(text) => string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json(item, out, depth + 1)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(key, out);
                out.push(':');
                json(item, out, depth + 1)?;
            }
            out.push('}');
        }
    }
    Some(())
}

/// A JSON string with `encoding/json`'s escapes (HTML characters and the line and paragraph
/// separators as `\u` escapes).
fn string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn floats_print_as_fmt_prints_them() {
        let cases = [
            (3.25, "3.25"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (123_456.0, "123456"),
            (1_234_567.0, "1.234567e+06"),
            (1e6, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (0.0, "0"),
        ];
        for (f, want) in cases {
            assert_eq!(verb_v(f), want, "{f}");
        }
    }

    #[test]
    fn json_floats_and_maps_print_as_encoding_json_writes_them() {
        assert_eq!(json_float(1e20), "100000000000000000000");
        assert_eq!(json_float(1e21), "1e+21");
        assert_eq!(json_float(1.5e-7), "1.5e-7");
        assert_eq!(json_float(0.000_001), "0.000001");
        assert_eq!(json_float(2.5), "2.5");
        let value = json!({"z": [1, 2.5, null, true], "a": "<b>&\u{2028}\n\u{1}"});
        assert_eq!(
            print(Item::Json(&value)).unwrap(),
            r#"{"a":"\u003cb\u003e\u0026\u2028\n\u0001","z":[1,2.5,null,true]}"#
        );
        assert_eq!(print(Item::Json(&json!(null))).unwrap(), "<no value>");
        assert_eq!(print(Item::Json(&json!(1e6))).unwrap(), "1e+06");
        assert_eq!(print(Item::Json(&json!(42))).unwrap(), "42");
        assert_eq!(print(Item::Byte(b'a')).unwrap(), "97");
    }
}
