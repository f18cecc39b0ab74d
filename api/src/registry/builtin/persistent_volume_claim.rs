//! PersistentVolumeClaim (`v1`): Kubernetes' `ValidatePersistentVolumeClaimSpec` and the
//! update rule (the spec is fixed once created, except what the binder and a resize change).

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use serde_json::Value;

use super::row::kind;
use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::QUANTITY_FORMAT_MSG;
use crate::validation::parse_quantity_nanos;
use crate::validation::validate_dns_subdomain;
use crate::validation::validate_label_selector;

/// The access modes, sorted as upstream lists them.
const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
/// The volume modes, sorted.
const VOLUME_MODES: &[&str] = &["Block", "Filesystem"];
const STORAGE_PATH: &str = "spec.resources[storage]";
const IMMUTABLE_SPEC: &str = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";

/// The strategy of `v1` PersistentVolumeClaim: the generic steps plus the spec rules.
pub struct PersistentVolumeClaimStrategy {
    base: Box<dyn Strategy>,
}

impl PersistentVolumeClaimStrategy {
    /// The PersistentVolumeClaim strategy of `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            base: kind::<PersistentVolumeClaim>().new_strategy(flavor),
        }
    }
}

fn storage_request(obj: &Value) -> Option<&str> {
    obj.pointer("/spec/resources/requests/storage")
        .and_then(Value::as_str)
}

fn access_modes(spec: &Value, errs: &mut Vec<FieldError>) {
    let modes: Vec<&str> = spec
        .get("accessModes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if modes.is_empty() {
        errs.push(FieldError::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    for mode in &modes {
        if !ACCESS_MODES.contains(mode) {
            errs.push(FieldError::not_supported(
                "spec.accessModes",
                *mode,
                ACCESS_MODES,
            ));
        }
    }
    let once_pod = modes.contains(&"ReadWriteOncePod");
    let others = modes
        .iter()
        .any(|m| *m != "ReadWriteOncePod" && ACCESS_MODES.contains(m));
    if once_pod && others {
        errs.push(FieldError::forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
}

impl Strategy for PersistentVolumeClaimStrategy {
    fn tracks_generation(&self) -> bool {
        self.base.tracks_generation()
    }

    /// `ValidatePersistentVolumeClaimSpec`: access modes, a positive storage request, the
    /// selector, the storage class name and the volume mode.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        access_modes(&spec, &mut errs);
        errs.extend(validate_label_selector(
            spec.get("selector"),
            "spec.selector",
        ));
        match storage_request(obj) {
            None => errs.push(FieldError::required(STORAGE_PATH, "")),
            Some(q) => match parse_quantity_nanos(q) {
                None => errs.push(FieldError::invalid(STORAGE_PATH, q, QUANTITY_FORMAT_MSG)),
                Some(v) if v <= 0 => {
                    errs.push(FieldError::invalid(
                        STORAGE_PATH,
                        q,
                        "must be greater than zero",
                    ));
                }
                Some(_) => {}
            },
        }
        if let Some(class) = spec.get("storageClassName").and_then(Value::as_str) {
            for msg in validate_dns_subdomain(class)
                .into_iter()
                .filter(|_| !class.is_empty())
            {
                errs.push(FieldError::invalid("spec.storageClassName", class, msg));
            }
        }
        if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str)
            && !VOLUME_MODES.contains(&mode)
        {
            errs.push(FieldError::not_supported(
                "spec.volumeMode",
                mode,
                VOLUME_MODES,
            ));
        }
        errs
    }

    /// `ValidatePersistentVolumeClaimUpdate`: only the binder's `volumeName` (once), the
    /// storage request of a bound claim and `volumeAttributesClassName` may change; a request
    /// may shrink only while it stays above `status.capacity` (volume-expansion recovery).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let mut new_spec = new.get("spec").cloned().unwrap_or(Value::Null);
        let mut old_spec = old.get("spec").cloned().unwrap_or(Value::Null);
        let bound = new.pointer("/status/phase").and_then(Value::as_str) == Some("Bound");
        for spec in [&mut new_spec, &mut old_spec] {
            if let Value::Object(m) = spec {
                m.remove("volumeAttributesClassName");
            }
        }
        if old_spec
            .get("volumeName")
            .is_none_or(|v| v.as_str() == Some(""))
            && let Value::Object(m) = &mut new_spec
        {
            match old_spec.get("volumeName") {
                Some(v) => m.insert("volumeName".to_owned(), v.clone()),
                None => m.remove("volumeName"),
            };
        }
        if bound && let Some(Value::Object(requests)) = new_spec.pointer_mut("/resources/requests")
        {
            match old_spec.pointer("/resources/requests/storage") {
                Some(v) => requests.insert("storage".to_owned(), v.clone()),
                None => requests.remove("storage"),
            };
        }
        if new_spec != old_spec {
            errs.push(FieldError::forbidden("spec", IMMUTABLE_SPEC));
        }
        let size = |obj: &Value| storage_request(obj).and_then(parse_quantity_nanos);
        let capacity = old
            .pointer("/status/capacity/storage")
            .and_then(Value::as_str)
            .and_then(parse_quantity_nanos)
            .unwrap_or(0);
        if let (Some(new_size), Some(old_size)) = (size(new), size(old))
            && new_size < old_size
            && new_size <= capacity
        {
            errs.push(FieldError::forbidden(
                "spec.resources.requests.storage",
                "field can not be less than status.capacity",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn strategy() -> PersistentVolumeClaimStrategy {
        PersistentVolumeClaimStrategy::new(Flavor::Kubernetes)
    }

    fn rendered(spec: Value) -> Vec<String> {
        strategy()
            .validate(&json!({ "spec": spec }))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn claim(storage: &str) -> Value {
        json!({"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":storage}}})
    }

    // R-RES-030: a claim without access modes or a storage request is refused.
    #[test]
    fn access_modes_and_storage() {
        assert!(rendered(claim("1Gi")).is_empty());
        assert_eq!(
            rendered(json!({})),
            vec![
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value",
            ]
        );
        assert_eq!(
            rendered(
                json!({"accessModes":["ReadWriteOncePod","ReadWriteOnce","Sometimes"],"resources":{"requests":{"storage":"1Gi"}}})
            ),
            vec![
                r#"spec.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod""#,
                "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
            ]
        );
        assert_eq!(
            rendered(claim("0")),
            vec![r#"spec.resources[storage]: Invalid value: "0": must be greater than zero"#]
        );
        let mut bad_mode = claim("1Gi");
        bad_mode["volumeMode"] = json!("Raw");
        assert_eq!(
            rendered(bad_mode),
            vec![
                r#"spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem""#
            ]
        );
    }

    #[test]
    fn spec_is_immutable_except_binding_and_resize() {
        let s = strategy();
        let old = json!({"spec": claim("1Gi"), "status": {"phase": "Pending"}});
        let mut bound_by_binder = old.clone();
        bound_by_binder["spec"]["volumeName"] = json!("pv-1");
        assert!(s.validate_update(&bound_by_binder, &old).is_empty());
        let mut other_class = old.clone();
        other_class["spec"]["storageClassName"] = json!("fast");
        assert_eq!(
            s.validate_update(&other_class, &old)[0].to_string(),
            format!("spec: Forbidden: {IMMUTABLE_SPEC}")
        );
        let pending_resize = json!({"spec": claim("2Gi"), "status": {"phase": "Pending"}});
        assert_eq!(s.validate_update(&pending_resize, &old)[0].field, "spec");
        let bound = json!({"spec": claim("1Gi"), "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}});
        let grown = json!({"spec": claim("2Gi"), "status": {"phase": "Bound"}});
        assert!(s.validate_update(&grown, &bound).is_empty());
        let shrunk = json!({"spec": claim("512Mi"), "status": {"phase": "Bound"}});
        assert_eq!(
            s.validate_update(&shrunk, &bound)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            vec![
                "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
            ]
        );
    }
}
