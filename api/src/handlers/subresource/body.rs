//! The bodies of subresource requests (Scale, Binding, Eviction, TokenRequest) and of the
//! reviews: a JSON object whose `apiVersion` and `kind`, when sent, must be the kind's,
//! type-checked through its k8s-openapi struct and answered with the same 400s as object
//! bodies.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ApiError;
use crate::error::excerpt;

/// `body` as a JSON object; 400 when it is not one.
pub(in crate::handlers) fn parse(body: &[u8]) -> Result<Value, ApiError> {
    let parse_error = |e: &dyn std::fmt::Display| {
        ApiError::BadRequest(format!("couldn't get version/kind; json parse error: {e}"))
    };
    match serde_json::from_slice(body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(parse_error(&"the body is not a JSON object")),
        Err(e) => Err(parse_error(&e)),
    }
}

/// `value` as `T`, a `kind` of one of `api_versions`: a different `apiVersion` or `kind` is a
/// 400, as is a field of the wrong type (`<kind> in version "v1" cannot be handled as a
/// <kind>: ...`). The first of `api_versions` names the version in that message.
pub(in crate::handlers) fn typed<T>(
    value: &Value,
    api_versions: &[&str],
    kind: &str,
) -> Result<T, ApiError>
where
    T: DeserializeOwned,
{
    let expected = api_versions.first().copied().unwrap_or_default();
    if let Some(v) = value.get("apiVersion").and_then(Value::as_str)
        && !api_versions.contains(&v)
    {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data ({}) does not match the expected API version ({expected})",
            excerpt(v)
        )));
    }
    if let Some(k) = value.get("kind").and_then(Value::as_str)
        && k != kind
    {
        return Err(ApiError::BadRequest(format!(
            "the kind in the data ({}) does not match the expected kind ({kind})",
            excerpt(k)
        )));
    }
    // k8s-openapi checks `apiVersion` against its own constant, which the flavor may spell
    // differently: it was checked above, so the struct sees the fields without it.
    let mut fields = value.clone();
    if let Value::Object(m) = &mut fields {
        m.remove("apiVersion");
        m.remove("kind");
    }
    let version = expected.rsplit('/').next().unwrap_or(expected);
    serde_json::from_value(fields).map_err(|e| {
        ApiError::BadRequest(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {}",
            excerpt(&e.to_string())
        ))
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::autoscaling::v1::Scale;
    use serde_json::json;

    use super::*;

    #[test]
    fn bodies_are_checked_before_use() {
        assert!(matches!(parse(b"[1]"), Err(ApiError::BadRequest(_))));
        assert!(matches!(parse(b"{"), Err(ApiError::BadRequest(_))));
        let ok = json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": 2}});
        let scale: Scale = typed(&ok, &["autoscaling/v1"], "Scale").expect("a Scale");
        assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
        let wrong_version = json!({"apiVersion": "apps/v1", "kind": "Scale"});
        let wrong_kind = json!({"kind": "Deployment"});
        let wrong_type = json!({"spec": {"replicas": "two"}});
        for bad in [wrong_version, wrong_kind, wrong_type] {
            let err = typed::<Scale>(&bad, &["autoscaling/v1"], "Scale").expect_err("refused");
            assert!(matches!(err, ApiError::BadRequest(_)), "{bad}");
        }
        let err = typed::<Scale>(
            &json!({"spec": {"replicas": "x"}}),
            &["autoscaling/v1"],
            "Scale",
        )
        .expect_err("refused");
        assert!(
            err.to_string()
                .starts_with("Scale in version \"v1\" cannot be handled as a Scale: "),
            "{err}"
        );
    }
}
