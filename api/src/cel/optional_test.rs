//! Tests of the optional syntax: the operators keep CEL's precedence and nest, the macros
//! bind their variable, quoted text is never read as syntax, and optional values are charged.

use serde_json::json;

use super::CompileError;
use super::Program;
use super::evaluate;

fn run(expression: &str, x: serde_json::Value) -> Result<serde_json::Value, String> {
    let program = Program::compile(expression, &["x"]).map_err(|e| e.to_string())?;
    evaluate(&program, &[("x", &x)]).map_err(|e| e.to_string())
}

#[test]
fn optional_operators_keep_precedence_and_nest() {
    // R-VER-034
    let x = json!({"a": {"b": 2}, "l": [10, 20], "m": {"k": "v"}});
    let cases = [
        ("x.?a.?b.orValue(0) + 1", json!(3)),
        ("x.?a.?c.orValue(0) + 1", json!(1)),
        ("x.?z.?b.orValue(-1) * 2", json!(-2)),
        ("x.?a.b.orValue(0)", json!(2)),
        ("x.?zz.b.c.hasValue()", json!(false)),
        ("x.l[?1].orValue(0) - x.l[?5].orValue(1)", json!(19)),
        ("x.m[?'k'].hasValue() && !x.m[?'q'].hasValue()", json!(true)),
        ("[?x.?a.?b, ?x.?zz, 3]", json!([2, 3])),
        (
            "{?'p': x.?a.?b, ?'q': x.?zz, 'r': 1}",
            json!({"p": 2, "r": 1}),
        ),
        ("x.?a.optMap(a, a.b * 10).orValue(0)", json!(20)),
        ("x.?zz.optMap(a, a.b * 10).orValue(0)", json!(0)),
        (
            "x.?a.optFlatMap(a, a.?b).optMap(b, b + 1).value()",
            json!(3),
        ),
        (
            "x.l.all(i, x.l.all(j, optional.of(i).optMap(v, v + j).value() > 0))",
            json!(true),
        ),
        (
            "'x.?a' + \"[?1]\" + '''{?k: v}'''",
            json!("x.?a[?1]{?k: v}"),
        ),
        ("optional.of(x).?a.?b.value()", json!(2)),
        ("optional.none().?a.hasValue()", json!(false)),
    ];
    for (expression, want) in cases {
        assert_eq!(run(expression, x.clone()), Ok(want), "{expression}");
    }
    assert!(run("x.?a.c.hasValue()", x).is_err_and(|e| e.contains("No such key: c")));
}

#[test]
fn the_macros_take_a_variable_and_an_expression() {
    assert!(matches!(
        Program::compile("optional.of(1).optMap(1, 2)", &[]),
        Err(CompileError::Syntax(_))
    ));
    assert!(matches!(
        Program::compile("optional.of(1).optMap(v)", &[]),
        Err(CompileError::Syntax(_))
    ));
    assert_eq!(
        Program::compile("optional.of(1).optMap(v, w)", &[]).map(|_| ()),
        Err(CompileError::Undeclared("w".to_owned()))
    );
}

#[test]
fn optional_results_are_metered() {
    let program = Program::compile("x.?a.optMap(a, a.b).orValue(0)", &["x"]).expect("compiles");
    let x = super::to_cel(&json!({"a": {"b": 1}}));
    let (result, cost) = super::evaluate_metered(&program, vec![("x", x)], 1_000);
    assert_eq!(result.map_err(|e| e.to_string()), Ok(cel::Value::Int(1)));
    assert!(cost > 0);
    let x = super::to_cel(&json!({"a": {"b": 1}}));
    let (result, _) = super::evaluate_metered(&program, vec![("x", x)], 1);
    assert_eq!(result, Err(super::EvalError::CostLimitExceeded));
}
