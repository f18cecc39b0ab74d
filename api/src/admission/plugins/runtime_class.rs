//! `RuntimeClass`: a new pod naming a RuntimeClass gets the class's `overhead.podFixed` as
//! its `spec.overhead` and the class's `scheduling` (node selector and tolerations merged
//! into its own); an overhead the class does not define, a selector that conflicts, or a
//! class that does not exist are refused (Kubernetes' plugin of that name).

use std::sync::Arc;

use serde_json::Map;
use serde_json::Value;

use super::objects::ObjectCache;
use super::pods::is_pod;
use super::tolerations;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;
use crate::validation::parse_quantity_nanos;

/// Applies and checks the RuntimeClass of new pods.
pub struct RuntimeClass {
    classes: ObjectCache,
}

impl RuntimeClass {
    /// The plugin reading `storage`'s RuntimeClasses.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        let group = format!("node.{}", flavor.group_domain());
        Self {
            classes: ObjectCache::new(storage, &group, "runtimeclasses"),
        }
    }

    /// The pod's RuntimeClass, `None` when it names none.
    async fn class_of(
        &self,
        attributes: &Attributes<'_>,
        pod: &Value,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        let Some(name) = pod
            .pointer("/spec/runtimeClassName")
            .and_then(Value::as_str)
        else {
            return Ok(None);
        };
        match self.classes.get("", name).await? {
            Some(class) => Ok(Some(class)),
            None => {
                Err(attributes
                    .forbidden(format!("pod rejected: RuntimeClass \"{name}\" not found")))
            }
        }
    }
}

/// Whether two resource lists hold the same quantities (`1` and `1000m` alike).
fn same_quantities(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let nanos = |v: &Value| v.as_str().and_then(parse_quantity_nanos);
    a.len() == b.len()
        && a.iter().all(|(name, q)| {
            let other = b.get(name).and_then(nanos);
            other.is_some() && other == nanos(q)
        })
}

fn non_empty_map(value: Option<&Value>) -> Option<&Map<String, Value>> {
    value.and_then(Value::as_object).filter(|m| !m.is_empty())
}

const MISMATCH: &str = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

fn set_overhead(
    attributes: &Attributes<'_>,
    spec: &mut Map<String, Value>,
    class: &Value,
) -> Result<(), ApiError> {
    let Some(fixed) = class
        .pointer("/overhead/podFixed")
        .and_then(Value::as_object)
    else {
        return Ok(());
    };
    if let Some(given) = non_empty_map(spec.get("overhead"))
        && !same_quantities(given, fixed)
    {
        return Err(attributes.forbidden(MISMATCH));
    }
    spec.insert("overhead".into(), Value::Object(fixed.clone()));
    Ok(())
}

fn set_scheduling(
    attributes: &Attributes<'_>,
    spec: &mut Map<String, Value>,
    class: &Value,
) -> Result<(), ApiError> {
    let Some(scheduling) = class.get("scheduling").filter(|s| s.is_object()) else {
        return Ok(());
    };
    let wanted = scheduling.get("nodeSelector").and_then(Value::as_object);
    let mut selector = (spec.get("nodeSelector").and_then(Value::as_object))
        .cloned()
        .unwrap_or_default();
    for (key, value) in wanted.into_iter().flatten() {
        let wanted = value.as_str().unwrap_or("");
        if let Some(own) = selector.get(key).and_then(Value::as_str)
            && own != wanted
        {
            return Err(attributes.forbidden(format!(
                "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {wanted}; \
                 pod.spec.nodeSelector[{key}] = {own}"
            )));
        }
        selector.insert(key.clone(), value.clone());
    }
    let own = (spec.get("tolerations").and_then(Value::as_array)).map_or(&[][..], Vec::as_slice);
    let added =
        (scheduling.get("tolerations").and_then(Value::as_array)).map_or(&[][..], Vec::as_slice);
    let Some(merged) = tolerations::merge(own, added) else {
        return Err(attributes.forbidden(format!(
            "pod rejected: more than {} tolerations to merge with the RuntimeClass's",
            tolerations::MAX_MERGED
        )));
    };
    if !selector.is_empty() {
        spec.insert("nodeSelector".into(), Value::Object(selector));
    }
    if !merged.is_empty() {
        spec.insert("tolerations".into(), Value::Array(merged));
    }
    Ok(())
}

fn admits(attributes: &Attributes<'_>) -> bool {
    attributes.operation == Operation::Create && is_pod(attributes)
}

#[async_trait::async_trait]
impl Plugin for RuntimeClass {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(pod) = object.filter(|_| admits(attributes)) else {
            return Ok(());
        };
        let Some(class) = self.class_of(attributes, pod).await? else {
            return Ok(());
        };
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        set_overhead(attributes, spec, &class)?;
        set_scheduling(attributes, spec, &class)
    }

    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(pod) = object.filter(|_| admits(attributes)) else {
            return Ok(());
        };
        let class = self.class_of(attributes, pod).await?;
        let Some(overhead) = non_empty_map(pod.pointer("/spec/overhead")) else {
            return Ok(());
        };
        match class.as_deref().and_then(|c| c.pointer("/overhead/podFixed")) {
            Some(fixed) => match fixed.as_object() {
                Some(fixed) if same_quantities(overhead, fixed) => Ok(()),
                _ => Err(attributes.forbidden(MISMATCH)),
            },
            None => Err(attributes.forbidden(
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
            )),
        }
    }
}
