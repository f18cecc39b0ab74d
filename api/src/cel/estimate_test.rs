//! Tests of the estimated cost: the schema's bounds, or what one request holds, bound it.

use cel::common::ast::IdedExpr;
use serde_json::json;

use super::Program;
use super::estimate::MAX_REQUEST_BYTES;
use super::estimate::Shape;
use super::estimate::estimate;
use super::estimate::unbounded_cardinality;

fn cost(expression: &str, schema: &serde_json::Value) -> u64 {
    let program = Program::compile(expression, &["self"]).expect("compiles");
    let expr: &IdedExpr = program.expression();
    estimate(expr, &[("self", Shape::Schema(schema, false))])
}

#[test]
fn bounds_of_the_schema_bound_the_estimate() {
    // R-VER-058
    let bounded = json!({"type": "object", "properties": {
        "l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 20}}
    }});
    let unbounded = json!({"type": "object", "properties": {
        "l": {"type": "array", "items": {"type": "string"}}
    }});
    let rule = "self.l.all(x, x.startsWith('a'))";
    // Per item: the loop condition (1) and step (1, plus the call: 1 for x, 1 plus a tenth of
    // 20 + 1 bytes), over 10 items, after reading self.l (2).
    assert_eq!(cost(rule, &bounded), 2 + 10 * (1 + 1 + 1 + 1 + 2));
    let items = (MAX_REQUEST_BYTES - 2) / 3;
    let per_item = 1 + 1 + 1 + (1 + (MAX_REQUEST_BYTES - 2 + 1) / 10);
    assert_eq!(cost(rule, &unbounded), 2 + items * per_item);
}

#[test]
fn regular_expressions_cost_input_length_times_pattern_length() {
    // R-VER-055
    let s = json!({"type": "string", "maxLength": 99});
    assert_eq!(cost("self.matches('^[a-z]+$')", &s), 1 + (1 + 10 * 2));
    let longer = json!({"type": "string", "maxLength": 999});
    assert_eq!(cost("self.matches('^[a-z]+$')", &longer), 1 + (1 + 100 * 2));
}

#[test]
fn unbounded_lists_repeat_a_rule_as_often_as_a_request_allows() {
    assert_eq!(
        unbounded_cardinality(&json!({"type": "integer"})),
        MAX_REQUEST_BYTES / 2
    );
    assert_eq!(
        unbounded_cardinality(&json!({"type": "string"})),
        MAX_REQUEST_BYTES / 3
    );
    assert_eq!(
        unbounded_cardinality(&json!({"type": "boolean"})),
        MAX_REQUEST_BYTES / 5
    );
}
