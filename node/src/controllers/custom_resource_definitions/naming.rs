//! The names a CRD is served under (apiextensions-apiserver's naming controller): the names
//! of `spec.names` are accepted into `status.acceptedNames` unless another CRD of the same
//! group already accepted them (a plural, singular or short name among the group's resource
//! names, a kind or list kind among its kinds); a name a CRD already accepted stays its own.
//! The `NamesAccepted` condition says which name conflicts, and `Established` starts `False`
//! until the establishing step sets it.

use apiary_api::registry::builtin::custom_resource_definition_lifecycle as lifecycle;
use lifecycle::Condition;
use serde_json::Map;
use serde_json::Value;

/// The names of a CRD, as `spec.names` or `status.acceptedNames` hold them (absent strings
/// are empty, absent lists are empty: Kubernetes compares them semantically).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// `plural`.
    pub plural: String,
    /// `singular`.
    pub singular: String,
    /// `shortNames`.
    pub short_names: Vec<String>,
    /// `kind`.
    pub kind: String,
    /// `listKind`.
    pub list_kind: String,
    /// `categories`.
    pub categories: Vec<String>,
}

impl Names {
    /// The names at `pointer` of `crd`.
    pub fn of(crd: &Value, pointer: &str) -> Self {
        let names = crd.pointer(pointer).unwrap_or(&Value::Null);
        let text = |key: &str| {
            names
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let list = |key: &str| {
            names
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        Self {
            plural: text("plural"),
            singular: text("singular"),
            short_names: list("shortNames"),
            kind: text("kind"),
            list_kind: text("listKind"),
            categories: list("categories"),
        }
    }

    /// The JSON of these names, as Kubernetes writes them: `plural` and `kind` always, the
    /// others only when not empty.
    pub fn to_json(&self) -> Value {
        let mut names = Map::new();
        names.insert("plural".to_owned(), self.plural.clone().into());
        if !self.singular.is_empty() {
            names.insert("singular".to_owned(), self.singular.clone().into());
        }
        if !self.short_names.is_empty() {
            names.insert("shortNames".to_owned(), self.short_names.clone().into());
        }
        names.insert("kind".to_owned(), self.kind.clone().into());
        if !self.list_kind.is_empty() {
            names.insert("listKind".to_owned(), self.list_kind.clone().into());
        }
        if !self.categories.is_empty() {
            names.insert("categories".to_owned(), self.categories.clone().into());
        }
        Value::Object(names)
    }
}

/// The resource names and kinds the CRDs of one group have accepted.
#[derive(Debug, Default)]
struct Taken {
    resources: Vec<String>,
    kinds: Vec<String>,
}

impl Taken {
    /// What the CRDs in `crds` of `group` (the CRD being named among them) have accepted.
    fn of_group<'a>(crds: impl Iterator<Item = &'a Value>, group: &str) -> Self {
        let mut taken = Self::default();
        for crd in crds.filter(|c| c.pointer("/spec/group").and_then(Value::as_str) == Some(group))
        {
            let accepted = Names::of(crd, "/status/acceptedNames");
            taken.resources.push(accepted.plural);
            taken.resources.push(accepted.singular);
            taken.resources.extend(accepted.short_names);
            taken.kinds.push(accepted.kind);
            taken.kinds.push(accepted.list_kind);
        }
        taken
    }
}

/// Kubernetes' `equalToAcceptedOrFresh`: `requested` may be used if it is the name already
/// accepted or nobody uses it; otherwise the conflict message.
fn fresh(requested: &str, accepted: &str, used: &[String]) -> Result<(), String> {
    if requested == accepted || !used.iter().any(|u| u == requested) {
        return Ok(());
    }
    Err(format!("{requested:?} is already in use"))
}

/// The accepted names and the `NamesAccepted` condition's (status, reason, message) of `crd`
/// among `crds` (every CRD, `crd` included), as Kubernetes computes them: each requested
/// name that conflicts keeps the accepted one, and the last conflict found names the reason.
fn calculate<'a>(
    crd: &Value,
    crds: impl Iterator<Item = &'a Value>,
) -> (Names, &'static str, &'static str, String) {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let taken = Taken::of_group(crds, group);
    let requested = Names::of(crd, "/spec/names");
    let accepted = Names::of(crd, "/status/acceptedNames");
    let mut names = accepted.clone();
    let mut conflict: Option<(&'static str, String)> = None;
    match fresh(&requested.plural, &accepted.plural, &taken.resources) {
        Ok(()) => names.plural.clone_from(&requested.plural),
        Err(message) => conflict = Some(("PluralConflict", message)),
    }
    match fresh(&requested.singular, &accepted.singular, &taken.resources) {
        Ok(()) => names.singular.clone_from(&requested.singular),
        Err(message) => conflict = Some(("SingularConflict", message)),
    }
    if requested.short_names != accepted.short_names {
        let errors: Vec<String> = requested
            .short_names
            .iter()
            .filter(|short| !accepted.short_names.contains(short))
            .filter_map(|short| fresh(short, "", &taken.resources).err())
            .collect();
        match errors.len() {
            0 => names.short_names.clone_from(&requested.short_names),
            1 => conflict = Some(("ShortNamesConflict", errors.concat())),
            _ => {
                conflict = Some(("ShortNamesConflict", format!("[{}]", errors.join(", "))));
            }
        }
    }
    match fresh(&requested.kind, &accepted.kind, &taken.kinds) {
        Ok(()) => names.kind.clone_from(&requested.kind),
        Err(message) => conflict = Some(("KindConflict", message)),
    }
    match fresh(&requested.list_kind, &accepted.list_kind, &taken.kinds) {
        Ok(()) => names.list_kind.clone_from(&requested.list_kind),
        Err(message) => conflict = Some(("ListKindConflict", message)),
    }
    names.categories = requested.categories;
    match conflict {
        Some((reason, message)) => (names, "False", reason, message),
        None => (
            names,
            "True",
            "NoConflicts",
            "no conflicts found".to_owned(),
        ),
    }
}

/// `crd` with its accepted names and `NamesAccepted` / `Established` conditions brought up to
/// date at `now`, given every CRD (`crds`, `crd` included); `None` when nothing changes.
pub fn name(crd: &Value, crds: &[Value], now: &str) -> Option<Value> {
    if Names::of(crd, "/spec/names") == Names::of(crd, "/status/acceptedNames") {
        return None;
    }
    let (names, status, reason, message) = calculate(crd, crds.iter());
    let naming = Condition {
        kind: lifecycle::NAMES_ACCEPTED,
        status,
        reason,
        message: &message,
    };
    if names == Names::of(crd, "/status/acceptedNames") && lifecycle::is_equivalent(crd, &naming) {
        return None;
    }
    let mut named = crd.clone();
    if let Some(status) = named.get_mut("status").and_then(Value::as_object_mut) {
        status.insert("acceptedNames".to_owned(), names.to_json());
    } else if let Some(map) = named.as_object_mut() {
        let mut status = Map::new();
        status.insert("acceptedNames".to_owned(), names.to_json());
        map.insert("status".to_owned(), Value::Object(status));
    }
    lifecycle::set(&mut named, &naming, now);
    if !lifecycle::is_true(crd, lifecycle::ESTABLISHED) {
        let (reason, message) = match status {
            "True" => ("Installing", "the initial names have been accepted"),
            _ => match lifecycle::find(crd, lifecycle::ESTABLISHED) {
                // An existing condition is left as it is.
                Some(_) => return Some(named),
                None => ("NotAccepted", "not all names are accepted"),
            },
        };
        let established = Condition {
            kind: lifecycle::ESTABLISHED,
            status: "False",
            reason,
            message,
        };
        lifecycle::set(&mut named, &established, now);
    }
    Some(named)
}

#[cfg(test)]
#[path = "naming_tests.rs"]
mod tests;
