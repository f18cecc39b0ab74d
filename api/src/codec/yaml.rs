//! YAML documents (`application/yaml`, R-RES-123): a JSON value written as YAML.

use serde_json::Value;

use crate::error::ApiError;

/// `value` as one YAML document.
pub(super) fn encode(value: &Value) -> Result<Vec<u8>, ApiError> {
    serde_saphyr::to_string(value)
        .map(String::into_bytes)
        .map_err(|e| ApiError::Internal(format!("answer cannot be written as YAML: {e}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // R-RES-123: YAML that reads back as the same object, strings that look like other
    // scalars kept strings.
    #[test]
    fn yaml_reads_back_as_the_object() {
        let obj = json!({
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "a", "resourceVersion": "12", "labels": {"x": "true"}},
            "data": {"n": "1", "empty": "", "multi": "a\nb", "null": "null"},
            "list": [1, 2.5, true, null, {"k": []}],
        });
        let yaml = String::from_utf8(encode(&obj).expect("encodes")).expect("utf-8");
        let back: Value = serde_saphyr::from_str(&yaml).expect("parses");
        assert_eq!(back, obj, "{yaml}");
    }
}
