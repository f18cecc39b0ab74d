//! Lists written from stored versions: the same bytes as the list encoded whole, and each
//! version read and encoded once while cached.

use serde_json::json;

use super::*;

fn config_map(name: &str, rv: u64) -> Value {
    json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string(),
            "uid": format!("uid-{name}")},
        "data": {"k": name}})
}

// R-RES-056, R-RES-057: the list from stored items is the enveloped list Kubernetes writes.
#[test]
fn stored_lists_equal_whole_lists_and_read_each_version_once() {
    let flavor = Flavor::Kubernetes;
    let head = json!({"kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "9", "continue": "next"}});
    let objects = [config_map("a", 3), config_map("b", 5)];
    let jsons: Vec<Vec<u8>> = objects.iter().map(|o| o.to_string().into_bytes()).collect();
    let keys = [
        "/registry/core/configmaps/default/a",
        "/registry/core/configmaps/default/b",
    ];
    fn items<'a>(keys: &[&'a str; 2], jsons: &'a [Vec<u8>]) -> Vec<StoredItem<'a>> {
        (0..2)
            .map(|i| StoredItem {
                key: keys[i],
                revision: [3, 5][i],
                json: &jsons[i],
            })
            .collect()
    }
    let cache = EncodingCache::new(MAX_CACHED_BYTES);
    let stored = encode_stored_list(flavor, &head, items(&keys, &jsons).into_iter(), &cache)
        .expect("encodes");
    let mut whole = head.clone();
    whole["items"] = json!(objects);
    assert_eq!(stored, encode_object(flavor, &whole).expect("encodes"));
    assert_eq!(cache.usage().1, 2, "one entry per stored version");

    // Cached versions are not read again: their stored JSON no longer matters.
    let unreadable = vec![b"not json".to_vec(), b"not json".to_vec()];
    let again = encode_stored_list(flavor, &head, items(&keys, &unreadable).into_iter(), &cache)
        .expect("served from the cache");
    assert_eq!(again, stored);
    // A version not cached is read, and an unreadable one is an error, not a panic.
    let fresh = EncodingCache::new(MAX_CACHED_BYTES);
    assert!(
        encode_stored_list(flavor, &head, items(&keys, &unreadable).into_iter(), &fresh).is_err()
    );
}
