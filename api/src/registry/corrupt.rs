//! Stored objects that cannot be read back (KEP-3926): the typed error a read meets for
//! bytes that no longer decode, naming each key as Kubernetes' `StorageError` of code 7
//! ("corrupt object") does, and the aggregate a list reports with the
//! `AllowUnsafeMalformedObjectDeletion` gate on (`StorageReadError`, at most
//! [`MAX_REPORTED`] keys, then a `TooMany` cause).

use std::fmt;

use serde_json::Value;
use serde_json::json;

use crate::group::GroupResource;

/// The delete option that asks for the forced removal of an object that cannot be read.
pub const IGNORE_READ_ERRORS: &str = "ignoreStoreReadErrorWithClusterBreakingPotential";

/// The most corrupt keys one list reports, as kube-apiserver's list error aggregator.
pub const MAX_REPORTED: usize = 100;

/// Kubernetes' cause message after the reported keys when more were met.
const TOO_MANY: &str = "too many errors, the list is truncated";

/// One stored object that cannot be decoded: its storage key and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptObject {
    /// The storage key.
    pub key: String,
    /// Why the bytes do not decode.
    pub reason: String,
}

impl fmt::Display for CorruptObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "StorageError: corrupt object, Code: 7, Key: {}, ResourceVersion: 0, \
             AdditionalErrorMsg: object not decodable: {}",
            self.key, self.reason
        )
    }
}

/// The corrupt objects one read met, in key order (at least one); `truncated` when more
/// than [`MAX_REPORTED`] were met and the rest are not named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptObjects {
    /// The objects met, at most [`MAX_REPORTED`].
    pub objects: Vec<CorruptObject>,
    /// Whether more were met than are named.
    pub truncated: bool,
}

impl CorruptObjects {
    /// The one object at `key`, unreadable for `reason`.
    pub fn one(key: &str, reason: impl fmt::Display) -> Self {
        Self {
            objects: vec![CorruptObject {
                key: key.to_owned(),
                reason: reason.to_string(),
            }],
            truncated: false,
        }
    }

    /// Adds the objects of `other` (a later read of the same list), up to the limit.
    pub fn extend(&mut self, other: Self) {
        for object in other.objects {
            if self.objects.len() >= MAX_REPORTED {
                self.truncated = true;
                return;
            }
            self.objects.push(object);
        }
        self.truncated |= other.truncated;
    }

    /// The first object met: what a read that stops there reports.
    pub fn first(&self) -> Option<&CorruptObject> {
        self.objects.first()
    }

    /// The `details` of the `StorageReadError` Status of a list of `resource`: the prefix
    /// `list` as name, one `UnexpectedServerResponse` cause per key, `TooMany` last when
    /// truncated.
    pub fn list_details(&self, resource: &GroupResource) -> Value {
        let mut causes: Vec<Value> = self
            .objects
            .iter()
            .map(|o| {
                json!({"reason": "UnexpectedServerResponse", "message": o.to_string(), "field": o.key})
            })
            .collect();
        if self.truncated {
            causes.push(json!({"reason": "TooMany", "message": TOO_MANY}));
        }
        let mut details = json!({"name": "list", "kind": resource.resource, "causes": causes});
        if !resource.group.is_empty() {
            details["group"] = resource.group.clone().into();
        }
        details
    }
}

impl fmt::Display for CorruptObjects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.first() {
            Some(first) => first.fmt(f),
            None => f.write_str("StorageError: corrupt object"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_names_at_most_the_limit_then_says_more() {
        let mut all = CorruptObjects::one("/k/0", "bad");
        for i in 1..=MAX_REPORTED {
            all.extend(CorruptObjects::one(&format!("/k/{i}"), "bad"));
        }
        assert_eq!(all.objects.len(), MAX_REPORTED);
        assert!(all.truncated);
        let details = all.list_details(&GroupResource::new("", "configmaps"));
        let causes = details["causes"].as_array().expect("causes");
        assert_eq!(causes.len(), MAX_REPORTED + 1);
        assert_eq!(causes[0]["field"], "/k/0");
        assert_eq!(causes[MAX_REPORTED]["reason"], "TooMany");
        assert_eq!(details["name"], "list");
        assert!(details.get("group").is_none());
        assert!(all.to_string().contains("Key: /k/0,"));
    }
}
