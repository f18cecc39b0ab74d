//! The ValidatingAdmissionPolicy plugin's work on one write (Kubernetes' dispatcher): every
//! policy whose constraints cover the write, with every binding that covers it and each of
//! its params, judged; failed validations turned into the binding's actions (a refusal, a
//! `Warning`, an audit annotation), `auditAnnotations` published as `<policy>/<key>`.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::activation::Activation;
use super::binding::Binding;
use super::binding::ValidationAction;
use super::cache::PolicyCache;
use super::definition::CompiledPolicy;
use super::definition::FailurePolicy;
use super::match_resources::Matched;
use super::params::Params;
use super::resources::Equivalents;
use super::resources::ResourceTable;
use super::validator::Decision;
use super::validator::validate;
use crate::admission::Attributes;
use crate::admission::Namespaces;
use crate::admission::Notes;
use crate::admission::admission_request;
use crate::auth::Requester;
use crate::cel::CelAuthorizer;
use crate::cel::to_cel;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::storage::Storage;

/// The longest `auditAnnotations` value published (Kubernetes' 10 KiB).
const MAX_ANNOTATION_BYTES: usize = 10 * 1024;

/// The first refusal of a write: policy, binding, message, reason.
struct Refusal {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: &'static str,
}

/// Judges writes by the replica's policies.
pub struct Dispatcher {
    cache: Arc<PolicyCache>,
    params: Params,
    namespaces: Arc<Namespaces>,
    flavor: Flavor,
    resources: ResourceTable,
}

/// The values every expression of one write sees.
struct Inputs {
    values: Vec<(&'static str, cel::Value)>,
    authorizer: Option<CelAuthorizer>,
}

impl Dispatcher {
    /// A dispatcher following the policies and bindings `resources` serves (`None` when it
    /// serves neither kind).
    pub fn start(
        storage: &Arc<dyn Storage>,
        resources: ResourceTable,
        namespaces: Arc<Namespaces>,
        flavor: Flavor,
    ) -> Option<Self> {
        let group = format!("admissionregistration.{}", flavor.group_domain());
        let policies = resources.by_resource(&group, "v1", "validatingadmissionpolicies")?;
        let bindings = resources.by_resource(&group, "v1", "validatingadmissionpolicybindings")?;
        let cache = PolicyCache::start(storage, policies.key_prefix(), bindings.key_prefix());
        Some(Self {
            cache,
            params: Params::new(storage.clone(), resources.clone()),
            namespaces,
            flavor,
            resources,
        })
    }

    /// Judges the write `attributes` describes: `Ok` when every policy lets it pass.
    pub async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let snapshot = self.cache.snapshot();
        if snapshot.hooks.is_empty() {
            return Ok(());
        }
        let namespace = |name: &str| self.namespaces.get(name);
        let equivalents = Equivalents::new(&self.resources, attributes.resource);
        // The values of the write, per version it is judged in.
        let mut inputs: Vec<(Matched, Inputs)> = Vec::new();
        let mut refusal: Option<Refusal> = None;
        for hook in &snapshot.hooks {
            let policy = &hook.policy;
            let constraints = &policy.match_constraints;
            let Some(matched) =
                constraints.matched(attributes, object, old, namespace, &equivalents)
            else {
                continue;
            };
            let param_type = match &policy.param_kind {
                Some(kind) => match self.params.resolve(kind) {
                    Ok(resource) => Some((kind, resource)),
                    Err(e) => {
                        configuration_error(&mut refusal, policy, None, &e);
                        continue;
                    }
                },
                None => None,
            };
            let mut annotations: Vec<(String, Vec<String>)> = Vec::new();
            for binding in &hook.bindings {
                let covered = (binding.match_resources.as_ref()).is_none_or(|m| {
                    (m.matched(attributes, object, old, namespace, &equivalents)).is_some()
                });
                if !covered {
                    continue;
                }
                let params = match (&param_type, &binding.param_ref) {
                    (Some((kind, resource)), Some(param_ref)) => {
                        let collected = (self.params)
                            .collect(kind, resource, param_ref, attributes.namespace)
                            .await;
                        match collected {
                            Ok(params) => params,
                            Err(e) => {
                                configuration_error(&mut refusal, policy, Some(binding), &e);
                                continue;
                            }
                        }
                    }
                    _ => vec![None],
                };
                let index = match inputs.iter().position(|(m, _)| *m == matched) {
                    Some(index) => index,
                    None => match self.inputs(attributes, object, old, &matched).await {
                        Ok(made) => {
                            inputs.push((matched.clone(), made));
                            inputs.len() - 1
                        }
                        Err(e) => {
                            let e = format!("failed to convert object version: {e}");
                            configuration_error(&mut refusal, policy, Some(binding), &e);
                            continue;
                        }
                    },
                };
                let Some((_, inputs)) = inputs.get(index) else {
                    continue;
                };
                for param in params {
                    let mut values = inputs.values.clone();
                    let param = param.map_or(cel::Value::Null, |p| to_cel(&p));
                    values.push(("params", param));
                    let mut activation =
                        Activation::new(values, &policy.variables, inputs.authorizer.as_ref());
                    let verdict = validate(policy, &mut activation).await;
                    for decision in &verdict.decisions {
                        self.act(&mut refusal, policy, binding, decision, notes);
                    }
                    for message in verdict.refusals {
                        refusal.get_or_insert(Refusal {
                            policy: policy.name.clone(),
                            binding: Some(binding.name.clone()),
                            message,
                            reason: "Invalid",
                        });
                    }
                    for (key, value) in verdict.annotations {
                        collect(&mut annotations, key, value);
                    }
                }
            }
            for (key, values) in annotations {
                crate::audit::annotate(&format!("{}/{key}", policy.name), &values.join(", "));
            }
        }
        match refusal {
            None => Ok(()),
            Some(refusal) => Err(refused(attributes, refusal)),
        }
    }

    /// Applies `binding`'s actions to a failed validation.
    fn act(
        &self,
        refusal: &mut Option<Refusal>,
        policy: &CompiledPolicy,
        binding: &Binding,
        decision: &Decision,
        notes: &mut Notes,
    ) {
        for action in &binding.actions {
            match action {
                ValidationAction::Deny => {
                    refusal.get_or_insert_with(|| Refusal {
                        policy: policy.name.clone(),
                        binding: Some(binding.name.clone()),
                        message: decision.message.clone(),
                        reason: decision.reason,
                    });
                }
                ValidationAction::Warn => notes.warnings.push(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                    policy.name, binding.name, decision.message
                )),
                ValidationAction::Audit => {
                    let actions: Vec<&str> = binding.actions.iter().map(|a| a.as_str()).collect();
                    let value = json!([{
                        "message": decision.message,
                        "policy": binding.policy,
                        "binding": binding.name,
                        "expressionIndex": decision.index,
                        "validationActions": actions,
                    }]);
                    let key = format!(
                        "validation.policy.admission.{}/validation_failure",
                        self.flavor.group_domain()
                    );
                    crate::audit::annotate(&key, &value.to_string());
                }
            }
        }
    }

    /// The values of the write judged as `matched`: `object`, `oldObject`, `request`,
    /// `namespaceObject`, and the requester's `authorizer`. An equivalent match sees the
    /// objects converted to its version (a subresource's own object as it is) and names its
    /// resource and kind in `request.resource` and `request.kind`.
    async fn inputs(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        matched: &Matched,
    ) -> Result<Inputs, ApiError> {
        let mut request = admission_request(attributes, "", None, None);
        if let Value::Object(fields) = &mut request {
            for field in ["uid", "object", "oldObject"] {
                fields.remove(field);
            }
        }
        let (mut converted, mut converted_old) = (None, None);
        if let Matched::Equivalent(to) = matched {
            request["resource"] =
                json!({"group": to.group, "version": to.version, "resource": to.plural});
            if attributes.object_kind.is_none() {
                request["kind"] =
                    json!({"group": to.group, "version": to.version, "kind": to.kind});
                if let Some(object) = object {
                    converted = Some(self.resources.convert(to, object.clone()).await?);
                }
                if let Some(old) = old {
                    converted_old = Some(self.resources.convert(to, old.clone()).await?);
                }
            }
        }
        let object = converted.as_ref().or(object);
        let old = converted_old.as_ref().or(old);
        let resource = attributes.resource;
        let of_namespace = resource.group.is_empty() && resource.plural == "namespaces";
        let namespace_object = match attributes.namespace {
            "" => None,
            _ if of_namespace => None,
            name => self.namespaces.get(name),
        };
        let as_cel = |v: Option<&Value>| v.map_or(cel::Value::Null, to_cel);
        let values = vec![
            ("object", as_cel(object)),
            ("oldObject", as_cel(old)),
            ("request", to_cel(&request)),
            (
                "namespaceObject",
                as_cel(namespace_object.map(|ns| trimmed_namespace(&ns)).as_ref()),
            ),
        ];
        let authorizer = Requester::current().map(|requester| {
            let info = RequestInfo {
                is_resource_request: true,
                path: String::new(),
                verb: Verb::Create,
                api_prefix: if resource.group.is_empty() {
                    "api"
                } else {
                    "apis"
                }
                .to_owned(),
                api_group: resource.group.clone(),
                api_version: resource.version.clone(),
                namespace: attributes.namespace.to_owned(),
                resource: resource.plural.clone(),
                subresource: attributes.subresource.to_owned(),
                name: attributes.name.to_owned(),
                parts: Vec::new(),
                field_selector: String::new(),
                label_selector: String::new(),
            };
            CelAuthorizer::new(requester.authz.clone(), attributes.user.clone())
                .with_request_resource(&info)
        });
        Ok(Inputs { values, authorizer })
    }
}

/// Kubernetes' `namespaceObject`: the Namespace's spec, status and metadata without its
/// managed fields and owner references.
fn trimmed_namespace(namespace: &Value) -> Value {
    const KEPT: &[&str] = &[
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    ];
    let mut trimmed = serde_json::Map::new();
    if let Some(Value::Object(metadata)) = namespace.get("metadata") {
        let kept = (metadata.iter())
            .filter(|(k, _)| KEPT.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        trimmed.insert("metadata".to_owned(), Value::Object(kept));
    }
    for field in ["spec", "status"] {
        if let Some(value) = namespace.get(field) {
            trimmed.insert(field.to_owned(), value.clone());
        }
    }
    Value::Object(trimmed)
}

/// Adds `value` under `key`, once (Kubernetes' audit annotation collector).
fn collect(annotations: &mut Vec<(String, Vec<String>)>, key: String, mut value: String) {
    if value.len() > MAX_ANNOTATION_BYTES {
        let mut end = MAX_ANNOTATION_BYTES;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        value.truncate(end);
    }
    match annotations.iter_mut().find(|(k, _)| *k == key) {
        Some((_, values)) if values.contains(&value) => {}
        Some((_, values)) => values.push(value),
        None => annotations.push((key, vec![value])),
    }
}

/// A policy or binding that cannot be used: the write is refused under `Fail`.
fn configuration_error(
    refusal: &mut Option<Refusal>,
    policy: &CompiledPolicy,
    binding: Option<&Binding>,
    error: &str,
) {
    if policy.failure_policy == FailurePolicy::Ignore {
        return;
    }
    let message = match binding {
        None => format!("failed to configure policy: {error}"),
        Some(_) => format!("failed to configure binding: {error}"),
    };
    refusal.get_or_insert_with(|| Refusal {
        policy: policy.name.clone(),
        binding: binding.map(|b| b.name.clone()),
        message,
        reason: "Invalid",
    });
}

/// The error of a refusal: Kubernetes' forbidden message with the policy's reason and code.
fn refused(attributes: &Attributes<'_>, refusal: Refusal) -> ApiError {
    let message = match &refusal.binding {
        Some(binding) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{binding}' denied request: {}",
            refusal.policy, refusal.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            refusal.policy, refusal.message
        ),
    };
    let code = match refusal.reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    ApiError::PolicyDenied {
        resource: attributes.resource.group_resource(),
        name: attributes.name.to_owned(),
        reason: refusal.reason,
        code,
        message,
    }
}
