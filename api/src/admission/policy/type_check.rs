//! Type checking of a ValidatingAdmissionPolicy, for its `status.typeChecking` (what
//! Kubernetes' policy status controller writes): every validation's `expression` and
//! `messageExpression` is checked ([`crate::cel::check`]) once per kind the policy's
//! `matchConstraints` name exactly (wildcards and subresources name none), with `object` and
//! `oldObject` typed by that kind's OpenAPI schema, `params` by the param kind's,
//! `namespaceObject` by Namespace's, `request` as the admission request and `variables` by
//! what each variable's expression produces. A policy whose rules name no kind is checked once
//! with `object` untyped. Each expression with issues is one `ExpressionWarning` whose text
//! has a line per kind (`apps/v1, Kind=Deployment: ERROR: ...`).

use serde_json::Value;
use serde_json::json;

use crate::cel::Program;
use crate::cel::authorizer::AUTHORIZER_VARIABLE;
use crate::cel::check::Components;
use crate::cel::check::Type;
use crate::cel::check::check;

/// The most bytes of warning text one policy's status holds: the warnings of later
/// expressions are left out (a policy of many expressions over many kinds could otherwise
/// outgrow the largest object the store takes).
const MAX_WARNING_BYTES: usize = 256 * 1024;

/// The most (group, version, resource) triples a policy is checked against: a rule's lists
/// multiply, so a small policy could otherwise name millions.
pub const MAX_RESOURCES_CHECKED: usize = 256;

/// A kind's schema: where its objects are typed from.
#[derive(Debug, Clone, Copy)]
pub struct Typed<'a> {
    /// The kind's group.
    pub group: &'a str,
    /// The kind's version.
    pub version: &'a str,
    /// The kind.
    pub kind: &'a str,
    /// The schemas `schema`'s references point into.
    pub components: &'a Components,
    /// The kind's schema.
    pub schema: &'a Value,
}

impl<'a> Typed<'a> {
    /// The type of the kind's objects.
    fn object_type(&self) -> Type<'a> {
        Type::of_schema(self.components, self.schema)
    }

    /// The kind as Kubernetes prints a GroupVersionKind (`apps/v1, Kind=Deployment`).
    fn label(&self) -> String {
        format!("{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// The schema in `components` of `kind` in `group`/`version` (the one whose
/// `x-kubernetes-group-version-kind` names it).
pub fn kind_schema<'a>(
    components: &'a Components,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<&'a Value> {
    components.values().find(|schema| {
        (schema
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array))
        .into_iter()
        .flatten()
        .any(|gvk| gvk["group"] == group && gvk["version"] == version && gvk["kind"] == kind)
    })
}

/// The (group, version, resource) triples whose kinds `policy`'s expressions are checked
/// against: every combination its `matchConstraints.resourceRules` name without a wildcard
/// (a rule with `*` in its groups, versions or resources names none; subresources are
/// skipped), the first [`MAX_RESOURCES_CHECKED`] in the rules' order, sorted and without
/// repeats.
pub fn resources_to_check(policy: &Value) -> Vec<(String, String, String)> {
    let strings = |rule: &Value, field: &str| -> Option<Vec<String>> {
        let values: Vec<String> = (rule.get(field).and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        (!values.is_empty() && !values.iter().any(|v| v == "*")).then_some(values)
    };
    let mut out = Vec::new();
    let rules = (policy.pointer("/spec/matchConstraints/resourceRules"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for rule in rules {
        let (Some(groups), Some(versions), Some(resources)) = (
            strings(rule, "apiGroups"),
            strings(rule, "apiVersions"),
            strings(rule, "resources"),
        ) else {
            continue;
        };
        let resources: Vec<&String> = resources.iter().filter(|r| !r.contains('/')).collect();
        let triples = (groups.iter())
            .flat_map(|g| versions.iter().map(move |v| (g, v)))
            .flat_map(|(g, v)| resources.iter().map(move |r| (g, v, *r)));
        for (group, version, resource) in triples {
            if out.len() == MAX_RESOURCES_CHECKED {
                break;
            }
            out.push((group.clone(), version.clone(), resource.clone()));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The type of the admission request (`request`), as Kubernetes declares it.
fn request_type<'a>() -> Type<'a> {
    let strings = |names: &[&str]| -> Type<'a> {
        Type::fields(
            (names.iter())
                .map(|n| ((*n).to_owned(), Type::String))
                .collect(),
        )
    };
    let kind = || strings(&["group", "version", "kind"]);
    let resource = || strings(&["group", "version", "resource"]);
    let user = Type::fields(vec![
        ("username".to_owned(), Type::String),
        ("uid".to_owned(), Type::String),
        ("groups".to_owned(), Type::strings()),
        (
            "extra".to_owned(),
            Type::Map(Box::new(Type::String), Box::new(Type::strings())),
        ),
    ]);
    Type::fields(vec![
        ("kind".to_owned(), kind()),
        ("resource".to_owned(), resource()),
        ("subResource".to_owned(), Type::String),
        ("requestKind".to_owned(), kind()),
        ("requestResource".to_owned(), resource()),
        ("requestSubResource".to_owned(), Type::String),
        ("name".to_owned(), Type::String),
        ("namespace".to_owned(), Type::String),
        ("operation".to_owned(), Type::String),
        ("userInfo".to_owned(), user),
        ("dryRun".to_owned(), Type::Bool),
        ("options".to_owned(), Type::Dyn),
    ])
}

/// Variables declared for an expression, with their types.
type Declared<'a> = Vec<(&'static str, Type<'a>)>;

/// The declared variables of `policy`'s expressions, with `object` of type `object`.
fn declarations<'a>(
    policy: &Value,
    object: Type<'a>,
    params: Option<Type<'a>>,
    namespace: Type<'a>,
) -> Declared<'a> {
    let mut declared = vec![
        ("object", object.clone()),
        ("oldObject", object),
        ("request", request_type()),
        ("namespaceObject", namespace),
        (AUTHORIZER_VARIABLE, Type::Dyn),
    ];
    if let Some(params) = params {
        declared.push(("params", params));
    }
    let names: Vec<&str> = (declared.iter().map(|(n, _)| *n))
        .chain(["variables"])
        .collect();
    let mut variables = Vec::new();
    let listed = (policy.pointer("/spec/variables").and_then(Value::as_array))
        .into_iter()
        .flatten();
    for variable in listed {
        let name = variable.get("name").and_then(Value::as_str).unwrap_or("");
        let source = variable.get("expression").and_then(Value::as_str);
        let produced = match source.map(|s| Program::compile(s, &names)) {
            Some(Ok(program)) => {
                let mut scope = declared.clone();
                scope.push(("variables", Type::fields(variables.clone())));
                check(&program, &scope).0
            }
            _ => Type::Dyn,
        };
        variables.push((name.to_owned(), produced));
    }
    declared.push(("variables", Type::fields(variables)));
    declared
}

/// `policy`'s `status.typeChecking.expressionWarnings`: its expressions checked against each
/// kind of `objects` (none: once, untyped), with `params` the param kind's schema (`None`:
/// the policy has none, or it is not served) and `namespace` Namespace's; the warnings stop
/// before their text would pass [`MAX_WARNING_BYTES`].
pub fn expression_warnings(
    policy: &Value,
    objects: &[Typed<'_>],
    params: Option<Typed<'_>>,
    namespace: Option<Typed<'_>>,
) -> Vec<Value> {
    let param_type = policy
        .pointer("/spec/paramKind")
        .filter(|k| k.is_object())
        .map(|_| params.map_or(Type::Dyn, |p| p.object_type()));
    let namespace = namespace.map_or(Type::Dyn, |n| n.object_type());
    let kinds: Vec<(Option<String>, Declared<'_>)> = match objects {
        [] => vec![(None, declarations(policy, Type::Dyn, param_type, namespace))],
        _ => (objects.iter())
            .map(|o| {
                let declared = declarations(
                    policy,
                    o.object_type(),
                    param_type.clone(),
                    namespace.clone(),
                );
                (Some(o.label()), declared)
            })
            .collect(),
    };
    let names: Vec<&str> = kinds
        .first()
        .map(|(_, declared)| declared.iter().map(|(n, _)| *n).collect())
        .unwrap_or_default();
    let mut warnings = Vec::new();
    let mut budget = MAX_WARNING_BYTES;
    let validations = (policy
        .pointer("/spec/validations")
        .and_then(Value::as_array))
    .into_iter()
    .flatten();
    for (i, validation) in validations.enumerate() {
        for field in ["expression", "messageExpression"] {
            let source = validation.get(field).and_then(Value::as_str).unwrap_or("");
            let Ok(program) = Program::compile(source, &names) else {
                continue;
            };
            let lines: Vec<String> = (kinds.iter())
                .filter_map(|(label, declared)| {
                    let issues = check(&program, declared).1;
                    (!issues.is_empty()).then(|| match label {
                        Some(label) => format!("{label}: {}", issues.join("\n")),
                        None => issues.join("\n"),
                    })
                })
                .collect();
            let text = lines.join("\n");
            if text.len() > budget {
                return warnings;
            }
            if !lines.is_empty() {
                budget -= text.len();
                warnings.push(json!({
                    "fieldRef": format!("spec.validations[{i}].{field}"),
                    "warning": text,
                }));
            }
        }
    }
    warnings
}
