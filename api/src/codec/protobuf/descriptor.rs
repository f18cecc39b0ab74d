//! The message table's types: what the encoder and decoder know of each Protobuf message of
//! the built-in kinds (k8s-pb has no reflection, so the table, generated from its sources into
//! `descriptor_table.rs`, stands in for it), and the lookups by kind and by name.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::descriptor_table::KINDS;
use super::descriptor_table::MESSAGES;
use crate::flavor::Flavor;
use crate::registry::builtin::GroupName;

/// An index into the message table.
pub type MessageId = u16;

/// One message: its fields in k8s-pb's declaration order (the Go struct's order, which Go's
/// JSON follows), and the order they are written in (by field number, as prost and Go's
/// generated marshalers write them); or the Kubernetes type with an encoding of its own.
#[derive(Debug)]
pub struct Message {
    /// The message's name: k8s-pb's module path and type (`api.core.v1.Pod`).
    pub name: &'static str,
    /// How the message maps to JSON.
    pub shape: Shape,
    /// Indices into `fields` in field-number order (the order they are written in).
    pub by_tag: &'static [u8],
    /// The fields (empty for a [`Shape::Special`] message).
    pub fields: &'static [Field],
}

/// How a message maps to JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A JSON object whose properties are the fields.
    Struct,
    /// A Kubernetes type whose JSON is not the object of its fields.
    Special(Special),
}

/// The Kubernetes types whose JSON form is not the object of their message's fields
/// (apimachinery's hand-written marshalers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `metav1.Time`: RFC 3339 seconds in JSON; `{seconds: 1, nanos: 2}` on the wire.
    Time,
    /// `metav1.MicroTime`: RFC 3339 with microseconds; `{seconds: 1, nanos: 2}`.
    MicroTime,
    /// `resource.Quantity`: its string in field 1.
    Quantity,
    /// `intstr.IntOrString`: a JSON number or string; `{type: 1, intVal: 2, strVal: 3}`.
    IntOrString,
    /// `runtime.RawExtension`, `metav1.FieldsV1`, apiextensions `JSON`: any JSON, its bytes
    /// in field 1.
    RawJson,
    /// A named slice type (`ExtraValue`): a JSON array of strings; `items` (field 1).
    StringList,
    /// apiextensions `JSONSchemaPropsOrArray`: a schema (field 1) or an array of them (2).
    SchemaOrArray,
    /// apiextensions `JSONSchemaPropsOrBool`: a boolean (field 1) or a schema (field 2).
    SchemaOrBool,
    /// apiextensions `JSONSchemaPropsOrStringArray`: a schema (field 1) or strings (field 2).
    SchemaOrStringArray,
}

/// One field of a [`Shape::Struct`] message.
#[derive(Debug)]
pub struct Field {
    /// The field number.
    pub tag: u32,
    /// The JSON property name (the Go JSON name).
    pub json: &'static str,
    /// The type of one value.
    pub ty: Ty,
    /// Whether the field holds one value, a list or a map.
    pub card: Card,
    /// Whether Go's JSON keeps the field's zero value (a pointer, or no `omitempty`): a
    /// decoded zero scalar stays in the JSON only then, since Go clients put the zero
    /// values of non-pointer fields on the wire.
    pub keep_zero: bool,
}

/// The type of one value of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A UTF-8 string.
    String,
    /// Bytes (base64 in JSON).
    Bytes,
    /// A boolean.
    Bool,
    /// A 32-bit signed integer (varint).
    Int32,
    /// A 64-bit signed integer (varint).
    Int64,
    /// A double (fixed 64 bits).
    Double,
    /// A nested message.
    Message(MessageId),
}

/// How many values a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Card {
    /// At most one.
    Optional,
    /// A list (never packed: k8s-pb and Kubernetes write one entry per value).
    Repeated,
    /// A map with string keys: entries `{key: 1, value: 2}` in key order.
    Map,
    /// One message whose fields are properties of the parent's JSON object (a Go struct
    /// embedded inline: `Volume.volumeSource`, `Probe.handler`); always written, as Go writes
    /// a non-pointer struct.
    Inline,
}

/// A kind with a message: its group (flavor-free), version and kind.
#[derive(Debug)]
pub struct KindEntry {
    /// The API group.
    pub group: GroupName,
    /// The API version.
    pub version: &'static str,
    /// The kind (`Pod`, `PodList`, `Status`).
    pub kind: &'static str,
    /// The resource whose objects are of this kind (`pods`); empty for lists, subresource
    /// kinds and meta kinds.
    pub plural: &'static str,
    /// The kind's message.
    pub message: MessageId,
}

/// The message with id `id`.
pub fn message(id: MessageId) -> &'static Message {
    &MESSAGES[usize::from(id)]
}

/// The message of kind `kind` in `apiVersion` `api_version` as `flavor` spells groups, if the
/// kind has one.
pub fn message_of_kind(flavor: Flavor, api_version: &str, kind: &str) -> Option<MessageId> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    KINDS
        .iter()
        .find(|k| k.kind == kind && k.version == version && k.group.name(flavor) == group)
        .map(|k| k.message)
}

/// Whether resource `plural` of `group` (as `flavor` spells it) in `version` is a kind with
/// a message.
pub fn serves_resource(flavor: Flavor, group: &str, version: &str, plural: &str) -> bool {
    KINDS
        .iter()
        .any(|k| k.plural == plural && k.version == version && k.group.name(flavor) == group)
}

/// The id of the message named `name` (`api.core.v1.Pod`).
pub fn message_named(name: &str) -> Option<MessageId> {
    static BY_NAME: OnceLock<HashMap<&'static str, MessageId>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| {
            MESSAGES
                .iter()
                .enumerate()
                .filter_map(|(i, m)| Some((m.name, MessageId::try_from(i).ok()?)))
                .collect()
        })
        .get(name)
        .copied()
}
