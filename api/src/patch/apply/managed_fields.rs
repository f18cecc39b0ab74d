//! `metadata.managedFields` <-> the owners of an object's fields: one [`Owned`] set per
//! [`Identity`], decoded with Kubernetes' checks (a malformed entry refuses the whole list, and
//! the caller falls back as Kubernetes does) and encoded in Kubernetes' order and form.

use std::collections::BTreeMap;

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Map;
use serde_json::Value;

use super::Operation;
use crate::patch::fieldpath::Set;
use crate::patch::fieldpath::fields_v1;

/// The only `fieldsType` served.
pub const FIELDS_V1: &str = "FieldsV1";

/// What tells managers apart (Kubernetes' manager identifier): the name, the operation, the
/// subresource, and for Update entries the API version (an applier keeps one entry across
/// versions).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Identity {
    /// The manager's name.
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The API version of an Update entry; empty for Apply entries.
    pub api_version: String,
    /// The subresource written through (empty: the main resource).
    pub subresource: String,
}

impl Identity {
    /// The identity of a manager writing `operation` at `api_version` through `subresource`.
    pub fn new(manager: &str, operation: Operation, api_version: &str, subresource: &str) -> Self {
        let api_version = match operation {
            Operation::Apply => "",
            Operation::Update => api_version,
        };
        Self {
            manager: manager.to_owned(),
            operation,
            api_version: api_version.to_owned(),
            subresource: subresource.to_owned(),
        }
    }
}

/// What one manager owns.
#[derive(Debug, Clone, PartialEq)]
pub struct Owned {
    /// The API version the set is written in.
    pub api_version: String,
    /// When the manager last changed the object (None: not recorded).
    pub time: Option<DateTime<Utc>>,
    /// The owned field paths.
    pub set: Set,
}

/// Every manager of an object.
pub type Managers = BTreeMap<Identity, Owned>;

/// Whether `managed_fields` (the value of `metadata.managedFields`) is the reset request
/// `[{}]`: one entry with nothing set (R-RES-224). An empty list is not one (R-RES-225).
pub fn is_reset(managed_fields: Option<&Value>) -> bool {
    match managed_fields {
        Some(Value::Array(entries)) => match entries.as_slice() {
            [Value::Object(entry)] => entry
                .values()
                .all(|v| v.is_null() || v.as_str() == Some("")),
            _ => false,
        },
        _ => false,
    }
}

/// The managers `managed_fields` lists (none when absent or null); the error says what is
/// malformed. A later entry with the identity of an earlier one replaces it, as in Kubernetes.
pub fn decode(managed_fields: Option<&Value>) -> Result<Managers, String> {
    let entries = match managed_fields {
        None | Some(Value::Null) => return Ok(Managers::new()),
        Some(Value::Array(entries)) => entries,
        Some(_) => return Err("managedFields must be a list".to_owned()),
    };
    let mut managers = Managers::new();
    for (i, entry) in entries.iter().enumerate() {
        let (identity, owned) = decode_entry(entry).map_err(|why| format!("entry {i}: {why}"))?;
        managers.insert(identity, owned);
    }
    Ok(managers)
}

fn decode_entry(entry: &Value) -> Result<(Identity, Owned), String> {
    let Value::Object(entry) = entry else {
        return Err("must be an object".to_owned());
    };
    let text = |name: &str| -> Result<&str, String> {
        match entry.get(name) {
            None | Some(Value::Null) => Ok(""),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(format!("{name} must be a string")),
        }
    };
    let operation = match text("operation")? {
        "Apply" => Operation::Apply,
        "Update" => Operation::Update,
        _ => return Err("operation must be `Apply` or `Update`".to_owned()),
    };
    let api_version = text("apiVersion")?;
    if api_version.is_empty() {
        return Err("apiVersion must not be empty".to_owned());
    }
    match text("fieldsType")? {
        FIELDS_V1 => {}
        "" => return Err("missing fieldsType".to_owned()),
        other => return Err(format!("invalid fieldsType {other:?}")),
    }
    let time = match text("time")? {
        "" => None,
        time => Some(
            DateTime::parse_from_rfc3339(time)
                .map_err(|e| format!("invalid time {time:?}: {e}"))?
                .with_timezone(&Utc),
        ),
    };
    let set = match entry.get("fieldsV1") {
        None | Some(Value::Null) => Set::new(),
        Some(fields) => fields_v1::decode(fields)?,
    };
    let identity = Identity::new(
        text("manager")?,
        operation,
        api_version,
        text("subresource")?,
    );
    let owned = Owned {
        api_version: api_version.to_owned(),
        time,
        set,
    };
    Ok((identity, owned))
}

/// `time` as Kubernetes writes a `metav1.Time`: RFC 3339 in UTC, to the second.
pub fn format_time(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The `metadata.managedFields` of `managers`: None when there are none (the field is then
/// left out). Entries are sorted as Kubernetes sorts them (Apply before Update, then by time,
/// manager, API version, subresource), each with its keys in Kubernetes' order.
pub fn encode(managers: &Managers) -> Option<Value> {
    if managers.is_empty() {
        return None;
    }
    let mut entries: Vec<(&Identity, &Owned)> = managers.iter().collect();
    entries.sort_by(|(a, x), (b, y)| {
        let seconds = |o: &Owned| o.time.map_or(0, |t| t.timestamp());
        a.operation
            .cmp(&b.operation)
            .then_with(|| seconds(x).cmp(&seconds(y)))
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| x.api_version.cmp(&y.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    let entries = entries
        .into_iter()
        .map(|(identity, owned)| encode_entry(identity, owned))
        .collect();
    Some(Value::Array(entries))
}

fn encode_entry(identity: &Identity, owned: &Owned) -> Value {
    let mut entry = Map::new();
    if !identity.manager.is_empty() {
        entry.insert("manager".to_owned(), identity.manager.clone().into());
    }
    entry.insert("operation".to_owned(), identity.operation.as_str().into());
    entry.insert("apiVersion".to_owned(), owned.api_version.clone().into());
    if let Some(time) = &owned.time {
        entry.insert("time".to_owned(), format_time(time).into());
    }
    entry.insert("fieldsType".to_owned(), FIELDS_V1.into());
    entry.insert("fieldsV1".to_owned(), fields_v1::encode(&owned.set));
    if !identity.subresource.is_empty() {
        entry.insert(
            "subresource".to_owned(),
            identity.subresource.clone().into(),
        );
    }
    Value::Object(entry)
}
