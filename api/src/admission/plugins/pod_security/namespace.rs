//! PodSecurity on namespaces: the policy labels must be valid (422 naming the label), and an
//! update that tightens the enforced level warns about the namespace's pods that violate it,
//! as pod-security-admission's namespace evaluation does.

use std::collections::BTreeMap;

use serde_json::Value;

use super::PodSecurity;
use super::checks;
use super::policy::Level;
use super::policy::LevelVersion;
use super::policy::Policy;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::error::ApiError;
use crate::registry::StoredJson;
use crate::registry::builtin;
use crate::storage::ReadConsistency;
use crate::validation::FieldError;

/// The most pods of a namespace checked against a new enforced level (Kubernetes' limit).
const MAX_PODS_TO_CHECK: usize = 3000;

fn labels(namespace: &Value) -> Option<&serde_json::Map<String, Value>> {
    namespace
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
}

impl PodSecurity {
    fn policy_of(&self, namespace: &Value) -> (Policy, Vec<FieldError>) {
        Policy::from_labels(labels(namespace), &self.prefix, &self.config.defaults)
    }

    /// A namespace's create or update.
    pub(super) async fn validate_namespace(
        &self,
        attributes: &Attributes<'_>,
        object: &Value,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let (policy, errors) = self.policy_of(object);
        let invalid = |causes| ApiError::Invalid {
            kind: attributes.resource.group_kind(),
            name: attributes.name.to_owned(),
            causes,
        };
        let Some(old) = old else {
            return match errors.is_empty() {
                true => Ok(()),
                false => Err(invalid(errors)),
            };
        };
        let (old_policy, old_errors) = self.policy_of(old);
        if !errors.is_empty() && (old_errors.is_empty() || errors != old_errors) {
            return Err(invalid(errors));
        }
        let (new, before) = (policy.enforce, old_policy.enforce);
        let relaxed = new.version == before.version && new.level <= before.level;
        if new == before || new.level == Level::Privileged || relaxed {
            return Ok(());
        }
        if self
            .config
            .exempt_namespaces
            .iter()
            .any(|n| n == attributes.name)
        {
            return Ok(());
        }
        notes
            .warnings
            .extend(self.check_existing_pods(attributes.name, new).await);
        Ok(())
    }

    /// The warnings about the pods of `namespace` that violate `enforce`: one line naming
    /// the namespace, then one per distinct set of reasons, naming its first pod by name and
    /// how many others share it.
    async fn check_existing_pods(&self, namespace: &str, enforce: LevelVersion) -> Vec<String> {
        let Some(pods) = builtin::rows()
            .into_iter()
            .find(|row| row.plural == "pods" && row.kind == "Pod")
        else {
            return Vec::new();
        };
        let prefix = format!(
            "{}{namespace}/",
            pods.resource_type(self.flavor).key_prefix()
        );
        let listed = self
            .storage
            .list(&prefix, None, MAX_PODS_TO_CHECK, ReadConsistency::Any)
            .await;
        let Ok(page) = listed else {
            return vec![
                "failed to list pods while checking new PodSecurity enforce level".to_owned(),
            ];
        };
        // reasons -> (first pod name, pods)
        let mut found: BTreeMap<String, (String, usize)> = BTreeMap::new();
        for item in &page.items {
            let Ok(pod) = StoredJson::from_stored(item.value.clone()).and_then(|s| s.to_value())
            else {
                continue;
            };
            let violations = checks::evaluate(enforce, &pod["metadata"], &pod["spec"]);
            if violations.is_empty() {
                continue;
            }
            let reasons = violations
                .iter()
                .map(|v| v.reason.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let name = pod
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let entry = found.entry(reasons).or_insert_with(|| (name.to_owned(), 0));
            if name < entry.0.as_str() {
                entry.0 = name.to_owned();
            }
            entry.1 += 1;
        }
        let mut warnings = Vec::new();
        let total = page.items.len() as u64 + page.remaining;
        if page.remaining > 0 {
            warnings.push(format!(
                "new PodSecurity enforce level only checked against the first {} of {total} existing pods",
                page.items.len()
            ));
        }
        if found.is_empty() {
            return warnings;
        }
        warnings.push(format!(
            "existing pods in namespace {namespace:?} violate the new PodSecurity enforce level \"{enforce}\""
        ));
        let mut pods: Vec<String> = found
            .into_iter()
            .map(|(reasons, (name, count))| match count {
                1 => format!("{name}: {reasons}"),
                2 => format!("{name} (and 1 other pod): {reasons}"),
                n => format!("{name} (and {} other pods): {reasons}", n - 1),
            })
            .collect();
        pods.sort();
        warnings.extend(pods);
        warnings
    }
}
