//! `Priority`: a new pod's `priorityClassName` resolved to its `priority` and
//! `preemptionPolicy` (the `globalDefault` class, else priority 0, when it names none), and
//! PriorityClass writes that would make a second default refused (Kubernetes' plugin of that
//! name). The two system classes resolve to their values also before they are stored.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::objects::ObjectCache;
use super::pods::is_pod;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// The preemption policy of a class that names none (the API's default).
const PREEMPT_LOWER: &str = "PreemptLowerPriority";

/// The system classes Kubernetes creates at start-up, with their values.
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// What a pod's priority is resolved to.
#[derive(Debug, PartialEq)]
struct Resolved {
    class: String,
    value: i64,
    policy: Option<String>,
}

/// Resolves pod priorities from the stored PriorityClasses.
pub struct Priority {
    classes: ObjectCache,
    group: String,
}

impl Priority {
    /// The plugin reading `storage`'s PriorityClasses.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        let group = format!("scheduling.{}", flavor.group_domain());
        Self {
            classes: ObjectCache::new(storage, &group, "priorityclasses"),
            group,
        }
    }

    /// The `globalDefault` class; of several (a race let them in), the lowest value.
    async fn default_class(
        &self,
        attributes: &Attributes<'_>,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        let classes = (self.classes.list().await).map_err(|e| attributes.forbidden(e))?;
        Ok((classes.into_iter())
            .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
            .min_by_key(|c| c.get("value").and_then(Value::as_i64).unwrap_or(0)))
    }

    async fn resolve(&self, attributes: &Attributes<'_>, name: &str) -> Result<Resolved, ApiError> {
        let of = |class: &Value| Resolved {
            class: name_of(class).to_owned(),
            value: class.get("value").and_then(Value::as_i64).unwrap_or(0),
            policy: Some(
                (class.get("preemptionPolicy").and_then(Value::as_str))
                    .unwrap_or(PREEMPT_LOWER)
                    .to_owned(),
            ),
        };
        if name.is_empty() {
            return Ok(match self.default_class(attributes).await? {
                Some(class) => of(&class),
                None => Resolved {
                    class: String::new(),
                    value: 0,
                    policy: Some(PREEMPT_LOWER.to_owned()),
                },
            });
        }
        if let Some(class) = self.classes.get("", name).await? {
            return Ok(of(&class));
        }
        match SYSTEM_CLASSES.iter().find(|(system, _)| *system == name) {
            Some((_, value)) => Ok(Resolved {
                class: name.to_owned(),
                value: *value,
                policy: Some(PREEMPT_LOWER.to_owned()),
            }),
            None => {
                Err(attributes.forbidden(format!("no PriorityClass with name {name} was found")))
            }
        }
    }

    async fn admit_pod(
        &self,
        attributes: &Attributes<'_>,
        pod: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        if attributes.operation == Operation::Update {
            let old_spec = old.and_then(|o| o.get("spec"));
            for field in ["priority", "preemptionPolicy"] {
                let kept = old_spec.and_then(|s| s.get(field)).filter(|v| !v.is_null());
                if let (None | Some(Value::Null), Some(kept)) = (spec.get(field), kept) {
                    spec.insert(field.to_owned(), kept.clone());
                }
            }
            return Ok(());
        }
        let named = (spec.get("priorityClassName").and_then(Value::as_str)).unwrap_or("");
        let named = named.to_owned();
        let resolved = self.resolve(attributes, &named).await?;
        if let Some(given) = spec.get("priority").and_then(Value::as_i64)
            && given != resolved.value
        {
            return Err(attributes.forbidden(format!(
                "the integer value of priority ({given}) must not be provided in pod spec; \
                 priority admission controller computed {} from the given PriorityClass name",
                resolved.value
            )));
        }
        if named.is_empty() && !resolved.class.is_empty() {
            spec.insert("priorityClassName".into(), json!(resolved.class));
        }
        spec.insert("priority".into(), json!(resolved.value));
        if let Some(policy) = resolved.policy {
            if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str)
                && given != policy
            {
                return Err(attributes.forbidden(format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod \
                     spec; priority admission controller computed {policy} from the given \
                     PriorityClass name"
                )));
            }
            spec.insert("preemptionPolicy".into(), json!(policy));
        }
        Ok(())
    }

    fn is_priority_class(&self, attributes: &Attributes<'_>) -> bool {
        attributes.resource.group == self.group
            && attributes.resource.plural == "priorityclasses"
            && attributes.subresource.is_empty()
    }
}

fn name_of(object: &Value) -> &str {
    (object.pointer("/metadata/name").and_then(Value::as_str)).unwrap_or("")
}

#[async_trait::async_trait]
impl Plugin for Priority {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        match object {
            Some(pod)
                if is_pod(attributes)
                    && matches!(attributes.operation, Operation::Create | Operation::Update) =>
            {
                self.admit_pod(attributes, pod, old).await
            }
            _ => Ok(()),
        }
    }

    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(class) = object else {
            return Ok(());
        };
        if !self.is_priority_class(attributes)
            || !matches!(attributes.operation, Operation::Create | Operation::Update)
            || class.get("globalDefault").and_then(Value::as_bool) != Some(true)
        {
            return Ok(());
        }
        let Some(current) = self.default_class(attributes).await? else {
            return Ok(());
        };
        let current = name_of(&current);
        if attributes.operation == Operation::Create || current != name_of(class) {
            return Err(attributes.forbidden(format!(
                "PriorityClass {current} is already marked as default. Only one default can exist"
            )));
        }
        Ok(())
    }
}
