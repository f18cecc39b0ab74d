//! The CEL conformance table: expressions from the CEL specification's and Kubernetes'
//! documented examples and test data, each with its variables and the value, error or cost
//! Kubernetes gives (`*.jsonl`, one row a line), run by one test that reports every failing
//! row. A row the engine gets wrong is kept with Kubernetes' answer and a `known` reason; it
//! is expected to still differ, so a fixed difference fails the table until the mark is
//! removed.

use serde::Deserialize;
use serde_json::Value;

use super::Program;
use super::evaluate_metered;
use super::to_cel;

/// The table files.
const TABLES: &[(&str, &str)] = &[
    ("core.jsonl", include_str!("core.jsonl")),
    ("strings.jsonl", include_str!("strings.jsonl")),
    ("kubernetes.jsonl", include_str!("kubernetes.jsonl")),
    ("cost.jsonl", include_str!("cost.jsonl")),
];

/// One row of the table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    /// The expression.
    expr: String,
    /// Its variables, as JSON.
    #[serde(default)]
    vars: serde_json::Map<String, Value>,
    /// The value it gives, as JSON (`null` included).
    #[serde(default, deserialize_with = "present")]
    value: Option<Value>,
    /// A text its evaluation (or compilation) error contains.
    #[serde(default)]
    error: Option<String>,
    /// Its actual cost in Kubernetes' units.
    #[serde(default)]
    cost: Option<u64>,
    /// Its estimated worst-case cost (variables of unknown size).
    #[serde(default)]
    estimate: Option<u64>,
    /// Why the engine differs from Kubernetes here.
    #[serde(default)]
    known: Option<String>,
}

/// A field that is present, whatever its value (so `"value": null` expects null).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// What the engine gives for `row`, or why it does not match.
fn check(row: &Row) -> Result<(), String> {
    let names: Vec<&str> = row.vars.keys().map(String::as_str).collect();
    let program = match Program::compile(&row.expr, &names) {
        Ok(program) => program,
        Err(e) => {
            let e = e.to_string();
            return match &row.error {
                Some(want) if e.contains(want.as_str()) => Ok(()),
                _ => Err(format!("compile error: {e}")),
            };
        }
    };
    let variables = row
        .vars
        .iter()
        .map(|(k, v)| (k.as_str(), to_cel(v)))
        .collect();
    let (result, cost) = evaluate_metered(&program, variables, super::rules::PER_CALL_LIMIT);
    match (&result, &row.value, &row.error) {
        (Ok(got), Some(want), _) => {
            let got = got
                .json()
                .map_err(|e| format!("unconvertible result: {e}"))?;
            if &got != want {
                return Err(format!("got {got}, want {want}"));
            }
        }
        (Err(e), _, Some(want)) => {
            let e = e.to_string();
            if !e.contains(want.as_str()) {
                return Err(format!("got error {e:?}, want one containing {want:?}"));
            }
        }
        (Ok(got), None, _) => return Err(format!("got {got:?}, want an error")),
        (Err(e), _, None) => return Err(format!("got error {e}")),
    }
    if let Some(want) = row.cost
        && cost != want
    {
        return Err(format!("cost {cost}, want {want}"));
    }
    if let Some(want) = row.estimate {
        let shapes: Vec<(&str, super::estimate::Shape<'_>)> = names
            .iter()
            .map(|n| (*n, super::estimate::Shape::Unknown))
            .collect();
        let got = super::estimate::estimate(program.expression(), &shapes);
        if got != want {
            return Err(format!("estimated cost {got}, want {want}"));
        }
    }
    Ok(())
}

#[test]
fn the_engine_answers_every_row_as_kubernetes_does() {
    // R-VER-002, R-VER-025, R-VER-026, R-VER-027, R-VER-028, R-VER-034, R-VER-035,
    // R-VER-052, R-VER-053, R-VER-054, R-VER-055, R-VER-056
    let mut failures = Vec::new();
    let mut rows = 0;
    for (file, text) in TABLES {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            rows += 1;
            let at = format!("{file}:{}", i + 1);
            let row: Row = match serde_json::from_str(line) {
                Ok(row) => row,
                Err(e) => {
                    failures.push(format!("{at}: malformed row: {e}"));
                    continue;
                }
            };
            match (check(&row), &row.known) {
                (Ok(()), None) | (Err(_), Some(_)) => {}
                (Err(e), None) => failures.push(format!("{at}: {}: {e}", row.expr)),
                (Ok(()), Some(reason)) => failures.push(format!(
                    "{at}: {}: now answers as Kubernetes does; remove the known difference ({reason})",
                    row.expr
                )),
            }
        }
    }
    assert!(rows >= 300, "the table has only {rows} rows");
    assert!(
        failures.is_empty(),
        "{} of {rows} rows fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
