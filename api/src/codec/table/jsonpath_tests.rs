//! JSONPath cases after client-go's documented examples and tests (rewritten on JSON data):
//! what each template finds, which ones fail, and which ones do not parse.

use serde_json::Value;
use serde_json::json;

use super::*;
use crate::codec::table::go_text;
use crate::codec::table::jsonpath_eval::Failure;

/// Every value the first action of `template` finds in `data`, printed and joined with
/// spaces as client-go prints one action; `Err` when the evaluation fails.
fn find(template: &str, data: &Value) -> Result<String, String> {
    let path = JsonPath::parse(template).map_err(|e| format!("parse: {}", e.0))?;
    let Some(Segment::Action(nodes)) = path.segments().first() else {
        return Err("no action".to_owned());
    };
    match Evaluator::default().list(vec![Item::Json(data)], nodes) {
        Ok(found) => Ok(found
            .into_iter()
            .map(|item| go_text::print(item).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" ")),
        Err(Failure::Error(_)) => Err("error".to_owned()),
        Err(Failure::Exhausted) => Err("exhausted".to_owned()),
    }
}

fn ok(template: &str, data: &Value, want: &str) {
    assert_eq!(find(template, data).as_deref(), Ok(want), "{template}");
}

fn fails(template: &str, data: &Value) {
    assert_eq!(
        find(template, data),
        Err("error".to_owned()),
        "{template} should fail"
    );
}

fn types() -> Value {
    json!({
        "bools": [true, false, true, false],
        "integers": [1, 2, 3, 4],
        "floats": [1.0, 2.2, 3.3, 4.0],
        "strings": ["one", "two", "three", "four"],
        "interfaces": [true, "one", 1, 1.1],
        "maps": [
            {"name": "one", "value": 1},
            {"name": "two", "value": 2.02},
            {"name": "three", "value": 3.03},
            {"name": "four", "value": 4.04}
        ]
    })
}

fn nodes() -> Value {
    json!({
        "kind": "List",
        "items": [
            {"kind": "None", "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
             "status": {"capacity": {"cpu": "4"}, "ready": true,
                        "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
            {"kind": "None", "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
             "status": {"capacity": {"cpu": "8"}, "ready": false,
                        "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.2"},
                                      {"type": "another", "address": "127.0.0.3"}]}}
        ],
        "users": [
            {"name": "myself", "user": {}},
            {"name": "e2e", "user": {"username": "admin", "password": "secret"}}
        ]
    })
}

#[test]
fn slices_take_indexes_from_either_end_with_steps() {
    let data = types();
    ok("{ .bools[-1] }", &data, "false");
    ok("{ .bools[0:2] }", &data, "true false");
    ok("{ .bools[:4:2] }", &data, "true true");
    ok("{ .integers[-2] }", &data, "3");
    ok("{ .integers[:2] }", &data, "1 2");
    ok("{ .floats[0:2] }", &data, "1 2.2");
    ok("{ .strings[:4:2] }", &data, "one three");
    ok("{ .interfaces[0:2] }", &data, "true one");
    ok("{ .interfaces[:4:2] }", &data, "true 1");
    ok("{ .maps[0] }", &data, r#"{"name":"one","value":1}"#);
    ok(
        "{ .maps[1::2] }",
        &data,
        r#"{"name":"two","value":2.02} {"name":"four","value":4.04}"#,
    );
    ok("{.integers[*]}", &data, "1 2 3 4");
    ok("{.integers[2:]}", &data, "3 4");
    ok("{.integers[2:2]}", &data, "");
    ok("{.integers}", &data, "[1,2,3,4]");
}

#[test]
fn out_of_bounds_indexes_and_bad_steps_fail() {
    let data = types();
    fails("{.integers[4]}", &data);
    fails("{.integers[-5]}", &data);
    fails("{.integers[0:9]}", &data);
    fails("{.integers[3:1]}", &data);
    fails("{.integers[::0]}", &data);
    fails("{.maps[0][0]}", &data);
    ok("{.nothing[0]}", &data, "");
}

#[test]
fn unions_filters_and_recursive_descent() {
    ok("{[1,3,4]}", &json!([0, 1, 2, 3, 4]), "1 3 4");
    ok("{[?(@<5)]}", &json!([2, 6, 3, 7]), "2 3");
    ok("{..}", &json!([1, 2, 3]), "[1,2,3]");
    ok(r#"{"{"}"#, &Value::Null, "{");
    let points = json!([
        {"id": "i1", "x": 4, "y": -5},
        {"id": "i2", "x": -2, "y": -5, "z": 1},
        {"id": "i3", "x": 8, "y": 3},
        {"id": "i5", "x": 0, "y": 2, "z": 1},
        {"id": "i7", "x": null, "y": 4}
    ]);
    ok("{[?(@.z)].id}", &points, "i2 i5");
    ok("{[0]['id']}", &points, "i1");
    // A null prints as `<no value>`: the table convertor prints the value, not the result.
    ok("{[-1]['x']}", &points, "<no value>");
    fails("{[?(@.x>0)].id}", &points);
    ok("{[?(@.y<=-5)].id}", &points, "i1 i2");
    ok("{[?(@.id!='i1')].y}", &points, "-5 3 2 4");
}

#[test]
fn kubernetes_objects_as_kubectl_reads_them() {
    let data = nodes();
    ok(
        "{.items[*].status.addresses[*].address}",
        &data,
        "127.0.0.1 127.0.0.2 127.0.0.3",
    );
    ok(
        "{.items[*]['metadata.name', 'status.capacity']}",
        &data,
        r#"127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}"#,
    );
    ok(
        r#"{.users[?(@.name=="e2e")].user.password}"#,
        &data,
        "secret",
    );
    ok(
        r"{.items[0].metadata.labels.kubernetes\.io/hostname}",
        &data,
        "127.0.0.1",
    );
    ok(
        r#"{.items[?(@.metadata.labels.kubernetes\.io/hostname=="127.0.0.1")].kind}"#,
        &data,
        "None",
    );
    ok(
        "{.items[?(@..ready==true)].metadata.name}",
        &data,
        "127.0.0.1",
    );
    ok("{..name}", &data, "127.0.0.1 127.0.0.2 myself e2e");
    ok("{...name}", &data, "127.0.0.1 127.0.0.2 myself e2e");
    ok("{.items[-1].metadata.name}", &data, "127.0.0.2");
    ok("{.items[0:2].kind}", &data, "None None");
    ok("{.hello}", &data, "");
    ok("{.users[1].user.*}", &data, "admin secret");
}

#[test]
fn bracketed_keys_are_paths_and_escaped_dots_are_keys() {
    let dotted = JsonPath::parse("{['a.b']}").unwrap();
    assert_eq!(dotted, JsonPath::parse("{.a.b}").unwrap());
    let escaped = JsonPath::parse(r"{.a\.b}").unwrap();
    assert_eq!(
        escaped.segments(),
        [Segment::Action(vec![Node::Field("a.b".to_owned())])]
    );
    let data = json!({"a.b": 1, "a": {"b": 2}});
    ok("{['a.b']}", &data, "2");
    ok(r"{.a\.b}", &data, "1");
}

#[test]
fn comparisons_of_unlike_values_and_keywords_fail() {
    let data = json!({"list": [{"n": 1}, {"n": "1"}, {"n": null}], "map": {"a": 1}});
    fails("{.list[?(@.n==1)]}", &data);
    fails("{.list[?(@.n<>1)]}", &data);
    fails("{[?(@.n==1.0)]}", &json!([{"n": 1}]));
    ok("{[?(@.n==1.5)].n}", &json!([{"n": 1.5}, {"n": 2.5}]), "1.5");
    fails("{.map[?(@.a)]}", &data);
    fails("{.map[0]}", &data);
    fails("{hello}", &data);
    fails("{end}", &data);
    fails("{range .list[*]}", &data);
}

#[test]
fn templates_that_do_not_parse() {
    for template in [
        "{.a",
        "{.a[",
        "{.a[x]}",
        "{.a[1:2:3:4]}",
        "{.a[-]}",
        "{....a}",
        "{............................................................Price}",
        r#"{"abc}"#,
        r#"{"\q"}"#,
        "{[?(@.a==1}",
        "{[?(@.a==1)}",
        "{.a{}",
        "{..*}",
        "{.a\t}",
        "{1.2.3}",
        "{.a}{.b",
    ] {
        assert!(
            JsonPath::parse(template).is_err(),
            "{template} should not parse"
        );
    }
    let texts = JsonPath::parse("before-{.hello}after").unwrap();
    assert_eq!(texts.segments().len(), 3);
    assert_eq!(
        JsonPath::parse(r#"{"a\tb\u00e9\x41\101"}"#)
            .unwrap()
            .segments(),
        [Segment::Action(vec![Node::Text("a\tbéAA".to_owned())])]
    );
    assert_eq!(
        JsonPath::parse("{-1 2.5 true x}").unwrap().segments(),
        [Segment::Action(vec![
            Node::Int(-1),
            Node::Float(2.5),
            Node::Bool(true),
            Node::Identifier("x".to_owned())
        ])]
    );
}

#[test]
fn the_first_value_of_the_first_action_is_the_cell_and_any_failure_empties_it() {
    let data = json!({"a": [1, 2], "b": "x"});
    let path = JsonPath::parse("{.a[*]}").unwrap();
    assert_eq!(path.first(&data), Some(Item::Json(&json!(1))));
    let later_failure = JsonPath::parse("{.b}{.a[7]}").unwrap();
    assert_eq!(later_failure.first(&data), None);
    let text_after = JsonPath::parse("{.b} and more").unwrap();
    assert_eq!(text_after.first(&data), Some(Item::Json(&json!("x"))));
    assert_eq!(JsonPath::parse("{.}").unwrap().first(&data), None);
}

#[test]
fn evaluation_stops_at_its_budget() {
    let mut deep = json!(1);
    for _ in 0..100 {
        deep = json!([deep, 2]);
    }
    assert!(find("{...*...*}", &deep).is_ok());
    assert_eq!(
        find("{...*...*...*...*}", &deep),
        Err("exhausted".to_owned())
    );
    let path = JsonPath::parse("{...*...*...*...*}").unwrap();
    assert_eq!(path.first(&deep), None);
}

#[test]
fn filters_and_unions_spend_the_budget_on_what_they_scan() {
    let data = json!({"big": vec![json!({}); 20_000]});
    let keys = vec!["'big'"; 40].join(",");
    let few = format!("{{[{}][?(@.x)]}}", ["'big'"; 2].join(","));
    assert_eq!(find(&few, &data), Ok(String::new()));
    let many = format!("{{[{keys}][?(@.x)]}}");
    assert_eq!(find(&many, &data), Err("exhausted".to_owned()));
}
