//! The strategy of every built-in kind without rules of its own: the body goes through the
//! kind's k8s-openapi struct (type checks, unknown fields dropped) and nothing else.

use serde_json::Value;

use super::row::TypedDecode;
use crate::registry::Strategy;

/// A kind served with only the generic steps.
pub struct GenericStrategy {
    decode: TypedDecode,
    api_version: String,
    tracks_generation: bool,
}

impl GenericStrategy {
    /// A strategy decoding through `decode` and serving objects as `api_version` (the
    /// flavor's spelling of the group).
    pub fn new(decode: TypedDecode, api_version: String, tracks_generation: bool) -> Self {
        Self {
            decode,
            api_version,
            tracks_generation,
        }
    }
}

impl Strategy for GenericStrategy {
    /// The store has already checked `apiVersion` and `kind`; they are removed before the
    /// typed decode because k8s-openapi accepts only the `k8s.io` spelling of a group, which
    /// the platform flavor does not use, and the served `apiVersion` is put back after.
    fn decode(&self, body: &[u8]) -> Result<Value, serde_json::Error> {
        let mut value: Value = serde_json::from_slice(body)?;
        if let Value::Object(m) = &mut value {
            m.remove("apiVersion");
            m.remove("kind");
        }
        let mut obj = (self.decode)(value)?;
        if let Value::Object(m) = &mut obj {
            m.insert("apiVersion".to_owned(), self.api_version.clone().into());
        }
        Ok(obj)
    }

    fn tracks_generation(&self) -> bool {
        self.tracks_generation
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::rbac::v1::ClusterRole;

    use crate::flavor::Flavor;
    use crate::registry::builtin::row::kind;

    // R-RES-031
    #[test]
    fn decodes_both_flavors_spelling_of_the_group() {
        for flavor in [Flavor::Platform, Flavor::Kubernetes] {
            let row = kind::<ClusterRole>();
            let api_version = row.resource_type(flavor).api_version();
            let s = row.new_strategy(flavor);
            let body = format!(
                r#"{{"apiVersion":"{api_version}","kind":"ClusterRole","metadata":{{"name":"r"}},"rules":[{{"verbs":["get"]}}],"bogus":1}}"#
            );
            let obj = s.decode(body.as_bytes()).expect("decodes");
            assert_eq!(obj["apiVersion"], api_version.as_str());
            assert_eq!(obj["kind"], "ClusterRole");
            assert!(obj.get("bogus").is_none());
            assert!(s.decode(br#"{"rules":[{"verbs":"get"}]}"#).is_err());
            assert!(!s.tracks_generation(), "ClusterRole has no status");
        }
    }
}
