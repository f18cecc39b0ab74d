//! Conversions between a served version and the storage version of resources that share
//! storage (Kubernetes "cohabitation", issue 5 design §3.1): [`Identity`] for versions with
//! the same schema, [`HPA_V1`] for `autoscaling/v1` ↔ `autoscaling/v2` HorizontalPodAutoscalers
//! and [`EVENTS_V1`] for `events.k8s.io/v1` ↔ core `v1` Events, with upstream's field maps.
//!
//! A conversion maps the body only: the store sets `apiVersion` and `kind` of the result, so
//! the conversions stay free of the flavor's group spelling. Objects are JSON values the
//! typed decode has already checked, so a conversion only moves fields.
//!
//! Custom resources convert through [`VersionConversion`] instead: their objects stay stored
//! in the version they were written in, and a conversion may call out (a webhook).

mod event;
mod hpa;

use serde_json::Value;

pub use self::event::EVENTS_V1;
pub use self::hpa::HPA_V1;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// Why an object could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// A round-trip annotation holds text that is not the JSON it must be.
    #[error("annotation {annotation} cannot be read: {reason}")]
    Annotation {
        /// The annotation's key.
        annotation: String,
        /// The JSON error.
        reason: String,
    },
}

/// The conversion between a served version and its storage version.
///
/// ### Correctness requirements
/// - Pure: no IO, no clock; the same input gives the same output on every replica.
/// - `to_served(to_storage(x))` equals `x` for every valid served object `x`, and
///   `to_storage(to_served(y))` equals `y` for every stored `y` (R-VER-070: objects
///   round-trip between served versions without loss; upstream keeps what a version cannot
///   express in annotations).
/// - `metadata` passes through, apart from round-trip annotations.
pub trait Conversion: Send + Sync + 'static {
    /// A served-version object in the storage version.
    fn to_storage(&self, obj: Value, flavor: Flavor) -> Result<Value, ConversionError>;

    /// A stored object in the served version.
    fn to_served(&self, obj: Value, flavor: Flavor) -> Result<Value, ConversionError>;

    /// Whether the conversion changes nothing ([`Identity`]).
    fn is_identity(&self) -> bool {
        false
    }
}

/// The conversion of a kind whose stored objects may be in any of its versions, and which
/// may call out to do it (a CustomResourceDefinition's `None` or `Webhook` strategy).
///
/// ### Correctness requirements
/// - [`Self::convert`] answers one object per object given, in order, each in
///   `api_version`; an object already in it is answered as it is. `metadata` stays as given
///   apart from labels and annotations.
/// - When [`Self::calls_out`] is false, converting changes `apiVersion` only (the store then
///   converts in place, without awaiting).
/// - Bounded: a call out ends within its timeout, and its failure is an [`ApiError`] naming
///   the conversion (Kubernetes answers a failed conversion webhook with a 500).
#[async_trait::async_trait]
pub trait VersionConversion: Send + Sync + 'static {
    /// Whether converting calls out (and so must be awaited).
    fn calls_out(&self) -> bool;

    /// `objects` in `api_version`.
    async fn convert(&self, objects: Vec<Value>, api_version: &str)
    -> Result<Vec<Value>, ApiError>;
}

/// Versions whose schemas are structurally identical: only `apiVersion` changes, which the
/// store sets.
#[derive(Debug, Clone, Copy, Default)]
pub struct Identity;

impl Conversion for Identity {
    fn to_storage(&self, obj: Value, _flavor: Flavor) -> Result<Value, ConversionError> {
        Ok(obj)
    }

    fn to_served(&self, obj: Value, _flavor: Flavor) -> Result<Value, ConversionError> {
        Ok(obj)
    }

    fn is_identity(&self) -> bool {
        true
    }
}

/// The one [`Identity`] conversion the table refers to.
pub static IDENTITY: Identity = Identity;

/// `obj` with each key `from` of `pairs` renamed `to`, in place (the field order is kept).
fn rename_keys(obj: Value, pairs: &[(&str, &str)]) -> Value {
    let Value::Object(map) = obj else { return obj };
    let renamed = map
        .into_iter()
        .map(|(k, v)| match pairs.iter().find(|(from, _)| *from == k) {
            Some((_, to)) => ((*to).to_owned(), v),
            None => (k, v),
        })
        .collect();
    Value::Object(renamed)
}

#[cfg(test)]
mod identity_tests;
