//! Hashing JSON values by content, so strategic merge patch can index list items by their
//! merge key (or scalar items by themselves) instead of searching the list for each one.
//! Equal values hash equally (maps whatever their key order); the hash is keyed per process,
//! so a client cannot choose values that collide.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::hash::Hash;
use std::hash::Hasher;
use std::sync::LazyLock;

use serde_json::Value;

/// The process's hash key.
static KEY: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// A value hashed by its content, for hash maps and sets of values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hashed<'a>(pub(super) &'a Value);

impl Hash for Hashed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(fingerprint(self.0));
    }
}

/// The keyed content hash of `value`. It recurses into lists and maps: identities are merge
/// key values and list items of documents that parsed within the nesting limit.
pub(super) fn fingerprint(value: &Value) -> u64 {
    let mut h = KEY.build_hasher();
    match value {
        Value::Null => 0u8.hash(&mut h),
        Value::Bool(b) => (1u8, b).hash(&mut h),
        Value::Number(n) => (2u8, n).hash(&mut h),
        Value::String(s) => (3u8, s).hash(&mut h),
        Value::Array(items) => {
            (4u8, items.len()).hash(&mut h);
            for item in items {
                h.write_u64(fingerprint(item));
            }
        }
        Value::Object(map) => {
            // Summed, so that the order of the keys does not matter.
            let entries = map.iter().fold(0u64, |sum, (key, item)| {
                let mut entry = KEY.build_hasher();
                key.hash(&mut entry);
                entry.write_u64(fingerprint(item));
                sum.wrapping_add(entry.finish())
            });
            (5u8, map.len(), entries).hash(&mut h);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn equal_values_hash_equally_and_others_apart() {
        let a: Value = serde_json::from_str(r#"{"x": 1, "y": [true, null, "s"]}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{"y": [true, null, "s"], "x": 1}"#).expect("json");
        assert_eq!(a, b);
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let distinct = [
            json!(null),
            json!(false),
            json!(0),
            json!(0.5),
            json!("0"),
            json!([]),
            json!({}),
            json!([0]),
            json!({"x": 0}),
            json!({"x": 1}),
            json!({"y": 0}),
        ];
        let hashes: std::collections::HashSet<u64> = distinct.iter().map(fingerprint).collect();
        assert_eq!(hashes.len(), distinct.len());
    }
}
