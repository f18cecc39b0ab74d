//! The overloads the checker knows: the binary operators' (arithmetic, ordering, equality,
//! logic, with cel-go's cross-type numeric comparisons), the string methods' and `size`'s,
//! and the one type of a list's or map's elements.

use cel::common::ast::operators;

use super::types::Type;

/// The methods of strings only (the standard library's and Kubernetes' string library's).
const STRING_METHODS: &[&str] = &[
    "charAt",
    "contains",
    "endsWith",
    "lowerAscii",
    "matches",
    "replace",
    "split",
    "startsWith",
    "substring",
    "trim",
    "upperAscii",
];

/// The signature (`int.(string)`, `(bool)`) of a call of `name` on `parts` that no overload
/// takes: a string method on a known type other than string, `size` of a scalar.
pub(super) fn misapplied(name: &str, method: bool, parts: &[Type<'_>]) -> Option<String> {
    let (target, args) = parts.split_first()?;
    let listed = |types: &[Type<'_>]| {
        let names: Vec<String> = types.iter().map(ToString::to_string).collect();
        names.join(", ")
    };
    let signature = match method {
        true => format!("{target}.({})", listed(args)),
        false => format!("({})", listed(parts)),
    };
    let string_method = method && STRING_METHODS.contains(&name);
    if string_method && !matches!(target, Type::Dyn | Type::String) {
        return Some(signature);
    }
    let sizeless = matches!(
        target,
        Type::Null
            | Type::Bool
            | Type::Int
            | Type::Uint
            | Type::Double
            | Type::Duration
            | Type::Timestamp
    );
    (name == "size" && (method || args.is_empty()) && sizeless).then_some(signature)
}

/// The binary operators whose overloads the checker knows.
pub(super) fn operator(name: &str) -> Option<&'static str> {
    [
        operators::ADD,
        operators::SUBSTRACT,
        operators::MULTIPLY,
        operators::DIVIDE,
        operators::MODULO,
        operators::LESS,
        operators::LESS_EQUALS,
        operators::GREATER,
        operators::GREATER_EQUALS,
        operators::EQUALS,
        operators::NOT_EQUALS,
        operators::LOGICAL_AND,
        operators::LOGICAL_OR,
    ]
    .into_iter()
    .find(|op| *op == name)
}

/// The result of `op` on `left` and `right`; `None`: no overload takes them. A `dyn` side
/// takes any overload (its result is `dyn` unless the operator's result type is fixed).
pub(super) fn binary<'a>(op: &str, left: &Type<'a>, right: &Type<'a>) -> Option<Type<'a>> {
    use Type::*;
    let unknown = left.is_dyn() || right.is_dyn();
    match op {
        operators::LOGICAL_AND | operators::LOGICAL_OR => {
            let boolish = |t: &Type<'_>| matches!(t, Bool | Dyn);
            (boolish(left) && boolish(right)).then_some(Bool)
        }
        operators::EQUALS | operators::NOT_EQUALS => {
            let comparable = unknown
                || matches!(left, Null)
                || matches!(right, Null)
                || (left.is_number() && right.is_number())
                || (left.is_object() && right.is_object())
                || left.same_kind(right);
            comparable.then_some(Bool)
        }
        operators::LESS
        | operators::LESS_EQUALS
        | operators::GREATER
        | operators::GREATER_EQUALS => {
            let ordered = |t: &Type<'_>| {
                matches!(t, Bool | String | Bytes | Duration | Timestamp) || t.is_number()
            };
            let fits = (unknown && ordered(if left.is_dyn() { right } else { left }))
                || (left.is_dyn() && right.is_dyn())
                || (left.is_number() && right.is_number())
                || (ordered(left) && left.same_kind(right));
            fits.then_some(Bool)
        }
        _ if unknown => {
            let candidates = [
                Int,
                Uint,
                Double,
                String,
                Bytes,
                Duration,
                Timestamp,
                List(Box::new(Dyn)),
            ];
            let fits = match (left.is_dyn(), right.is_dyn()) {
                (true, true) => true,
                (true, false) => candidates
                    .iter()
                    .any(|c| arithmetic(op, c, right).is_some()),
                (false, _) => candidates.iter().any(|c| arithmetic(op, left, c).is_some()),
            };
            fits.then_some(Dyn)
        }
        _ => arithmetic(op, left, right),
    }
}

/// The result of the arithmetic operator `op` on two known types.
fn arithmetic<'a>(op: &str, left: &Type<'a>, right: &Type<'a>) -> Option<Type<'a>> {
    use Type::*;
    let same_number = left.is_number() && left.same_kind(right);
    match (op, left, right) {
        (operators::ADD, String, String) | (operators::ADD, Bytes, Bytes) => Some(left.clone()),
        (operators::ADD, List(a), List(b)) => {
            Some(List(Box::new(common(vec![(**a).clone(), (**b).clone()]))))
        }
        (operators::ADD, Timestamp, Duration) | (operators::ADD, Duration, Timestamp) => {
            Some(Timestamp)
        }
        (operators::ADD | operators::SUBSTRACT, Duration, Duration) => Some(Duration),
        (operators::SUBSTRACT, Timestamp, Timestamp) => Some(Duration),
        (operators::SUBSTRACT, Timestamp, Duration) => Some(Timestamp),
        (operators::MODULO, Double, Double) => None,
        (
            operators::ADD
            | operators::SUBSTRACT
            | operators::MULTIPLY
            | operators::DIVIDE
            | operators::MODULO,
            _,
            _,
        ) if same_number => Some(left.clone()),
        _ => None,
    }
}

/// The one type all of `types` have, or `dyn` when they differ (an empty list's elements are
/// `dyn`).
pub(super) fn common(types: Vec<Type<'_>>) -> Type<'_> {
    let mut types = types.into_iter();
    let Some(first) = types.next() else {
        return Type::Dyn;
    };
    let scalar = !matches!(
        first,
        Type::List(_) | Type::Map(..) | Type::Schema(..) | Type::Fields(_)
    );
    if scalar && types.all(|t| t.same_kind(&first)) {
        first
    } else {
        Type::Dyn
    }
}
