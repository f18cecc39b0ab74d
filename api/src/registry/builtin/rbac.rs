//! Role, ClusterRole, RoleBinding and ClusterRoleBinding (`rbac.authorization/v1`):
//! Kubernetes' defaults and validation of the RBAC kinds. Names are path segments; rules need
//! verbs and, for resources, groups and resources; non-resource URLs only in ClusterRoles;
//! bindings reference a Role or ClusterRole of the RBAC group and name valid subjects; a
//! binding's `roleRef` cannot change (R-ACC-179). What a role or binding grants is weighed
//! against its writer in the store's write step (crate::auth::rbac's escalation check).

use serde_json::Value;
use serde_json::json;

use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::NameRule;
use crate::validation::validate_dns_subdomain;
use crate::validation::validate_label_selector;

/// Which RBAC kind a strategy serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RbacKind {
    /// Role (namespaced rules).
    Role,
    /// ClusterRole (cluster rules, aggregation).
    ClusterRole,
    /// RoleBinding (grants in its namespace).
    RoleBinding,
    /// ClusterRoleBinding (grants cluster-wide).
    ClusterRoleBinding,
}

/// The strategy of one RBAC kind.
pub struct RbacStrategy {
    kind: RbacKind,
    /// `rbac.authorization.<domain>`.
    group: String,
}

impl RbacStrategy {
    /// The strategy of `kind` in `flavor`.
    pub fn new(kind: RbacKind, flavor: Flavor) -> Self {
        Self {
            kind,
            group: format!("rbac.authorization.{}", flavor.group_domain()),
        }
    }

    fn namespaced(&self) -> bool {
        matches!(self.kind, RbacKind::Role | RbacKind::RoleBinding)
    }

    fn is_binding(&self) -> bool {
        matches!(
            self.kind,
            RbacKind::RoleBinding | RbacKind::ClusterRoleBinding
        )
    }
}

fn strings(v: Option<&Value>) -> Vec<&str> {
    (v.and_then(Value::as_array).into_iter().flatten())
        .filter_map(Value::as_str)
        .collect()
}

/// Kubernetes' `ValidatePolicyRule`.
fn validate_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = |field: &str| strings(rule.get(field));
    if list("verbs").is_empty() {
        errs.push(FieldError::required(
            format!("{path}.verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = list("nonResourceURLs");
    if !urls.is_empty() {
        let value = json!(urls);
        if namespaced {
            errs.push(FieldError::invalid(
                format!("{path}.nonResourceURLs"),
                value.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        let resources = ["apiGroups", "resources", "resourceNames"];
        if resources.iter().any(|f| !list(f).is_empty()) {
            errs.push(FieldError::invalid(
                format!("{path}.nonResourceURLs"),
                value,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if rule
        .get("apiGroups")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        errs.push(FieldError::required(
            format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if list("resources").is_empty() {
        errs.push(FieldError::required(
            format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

impl RbacStrategy {
    fn validate_role(&self, obj: &Value) -> Vec<FieldError> {
        let rules = obj.get("rules").and_then(Value::as_array);
        let mut errs: Vec<FieldError> = (rules.into_iter().flatten().enumerate())
            .flat_map(|(i, r)| validate_rule(r, self.namespaced(), &format!("rules[{i}]")))
            .collect();
        if let Some(aggregation) = obj.get("aggregationRule").filter(|a| !a.is_null()) {
            let path = "aggregationRule.clusterRoleSelectors";
            let selectors = aggregation
                .get("clusterRoleSelectors")
                .and_then(Value::as_array);
            if selectors.is_none_or(Vec::is_empty) {
                errs.push(FieldError::required(
                    path,
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                ));
            }
            for (i, selector) in selectors.into_iter().flatten().enumerate() {
                errs.extend(validate_label_selector(
                    Some(selector),
                    &format!("{path}[{i}]"),
                ));
            }
        }
        errs
    }

    fn validate_binding(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let text = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or("").to_owned();
        let role_ref = obj.get("roleRef").cloned().unwrap_or(Value::Null);
        let api_group = text(&role_ref, "apiGroup");
        if api_group != self.group {
            errs.push(FieldError::not_supported(
                "roleRef.apiGroup",
                api_group,
                &[&self.group],
            ));
        }
        let kind = text(&role_ref, "kind");
        if kind != "Role" && kind != "ClusterRole" {
            errs.push(FieldError::not_supported(
                "roleRef.kind",
                kind,
                &["Role", "ClusterRole"],
            ));
        }
        let name = text(&role_ref, "name");
        if name.is_empty() {
            errs.push(FieldError::required("roleRef.name", ""));
        }
        for msg in NameRule::PathSegment.check(&name, false) {
            errs.push(FieldError::invalid("roleRef.name", name.clone(), msg));
        }
        let subjects = obj.get("subjects").and_then(Value::as_array);
        for (i, subject) in subjects.into_iter().flatten().enumerate() {
            errs.extend(self.validate_subject(subject, &format!("subjects[{i}]")));
        }
        errs
    }

    /// Kubernetes' `ValidateRoleBindingSubject`.
    fn validate_subject(&self, subject: &Value, path: &str) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let text = |f: &str| subject.get(f).and_then(Value::as_str).unwrap_or("");
        let name = text("name");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        }
        let api_group = text("apiGroup");
        match text("kind") {
            "ServiceAccount" => {
                if !name.is_empty() {
                    for msg in validate_dns_subdomain(name) {
                        errs.push(FieldError::invalid(format!("{path}.name"), name, msg));
                    }
                }
                if !api_group.is_empty() {
                    errs.push(FieldError::not_supported(
                        format!("{path}.apiGroup"),
                        api_group,
                        &[""],
                    ));
                }
                if !self.namespaced() && text("namespace").is_empty() {
                    errs.push(FieldError::required(format!("{path}.namespace"), ""));
                }
            }
            "User" | "Group" => {
                if api_group != self.group {
                    errs.push(FieldError::not_supported(
                        format!("{path}.apiGroup"),
                        api_group,
                        &[&self.group],
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                format!("{path}.kind"),
                other,
                &["ServiceAccount", "User", "Group"],
            )),
        }
        errs
    }
}

impl Strategy for RbacStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    /// The RBAC kinds have no status and no generation.
    fn tracks_generation(&self) -> bool {
        false
    }

    /// Kubernetes' v1 defaults: a binding's `roleRef.apiGroup` and its User and Group
    /// subjects' `apiGroup` are the RBAC group when unset.
    fn default_fields(&self, obj: &mut Value) {
        if !self.is_binding() {
            return;
        }
        let group = Value::String(self.group.clone());
        if let Some(Value::Object(role_ref)) = obj.get_mut("roleRef") {
            let unset = role_ref
                .get("apiGroup")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if unset {
                role_ref.insert("apiGroup".to_owned(), group.clone());
            }
        }
        let subjects = obj.get_mut("subjects").and_then(Value::as_array_mut);
        for subject in subjects.into_iter().flatten() {
            let Value::Object(s) = subject else {
                continue;
            };
            let user_or_group = matches!(
                s.get("kind").and_then(Value::as_str),
                Some("User" | "Group")
            );
            let unset = s
                .get("apiGroup")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if user_or_group && unset {
                s.insert("apiGroup".to_owned(), group.clone());
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        if self.is_binding() {
            self.validate_binding(obj)
        } else {
            self.validate_role(obj)
        }
    }

    /// A binding's `roleRef` is immutable (R-ACC-179): delete and recreate the binding.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let changed = self.is_binding() && new.get("roleRef") != old.get("roleRef");
        if changed {
            let value = new.get("roleRef").cloned().unwrap_or(Value::Null);
            vec![FieldError::invalid(
                "roleRef",
                value,
                "cannot change roleRef",
            )]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP: &str = "rbac.authorization.k8s.io";

    fn errors(kind: RbacKind, obj: Value) -> Vec<String> {
        let strategy = RbacStrategy::new(kind, Flavor::Kubernetes);
        let mut obj = obj;
        strategy.default_fields(&mut obj);
        strategy
            .validate(&obj)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    // R-ACC-180: rules are validated as Kubernetes validates them.
    #[test]
    fn rules_need_verbs_groups_and_resources_or_cluster_urls() {
        let ok = json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
        assert!(errors(RbacKind::Role, ok.clone()).is_empty());
        assert!(errors(RbacKind::ClusterRole, ok).is_empty());
        assert_eq!(
            errors(
                RbacKind::Role,
                json!({"rules": [{"apiGroups": [""], "resources": ["pods"]}]})
            ),
            ["rules[0].verbs: Required value: verbs must contain at least one value"]
        );
        assert_eq!(
            errors(
                RbacKind::ClusterRole,
                json!({"rules": [{"verbs": ["get"]}]})
            ),
            [
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[0].resources: Required value: resource rules must supply at least one resource",
            ]
        );
        let urls = json!({"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]});
        assert!(errors(RbacKind::ClusterRole, urls.clone()).is_empty());
        assert_eq!(
            errors(RbacKind::Role, urls),
            [
                r#"rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs"#
            ]
        );
        assert_eq!(
            errors(
                RbacKind::ClusterRole,
                json!({"rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]})
            ),
            [
                r#"rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs"#
            ]
        );
        assert_eq!(
            errors(RbacKind::ClusterRole, json!({"aggregationRule": {}})),
            [
                "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
            ]
        );
    }

    // R-ACC-179, R-ACC-181: bindings reference a Role or ClusterRole of the RBAC group and
    // name valid subjects; User and Group subjects default to the RBAC group.
    #[test]
    fn bindings_reference_roles_and_name_subjects() {
        let binding =
            |role_ref: Value, subjects: Value| json!({"roleRef": role_ref, "subjects": subjects});
        let role_ref = json!({"kind": "ClusterRole", "name": "view"});
        let subjects = json!([
            {"kind": "User", "name": "u"},
            {"kind": "Group", "name": "g"},
            {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
        ]);
        assert!(
            errors(
                RbacKind::ClusterRoleBinding,
                binding(role_ref.clone(), subjects)
            )
            .is_empty()
        );
        assert_eq!(
            errors(
                RbacKind::ClusterRoleBinding,
                binding(
                    role_ref.clone(),
                    json!([{"kind": "ServiceAccount", "name": "sa"}])
                )
            ),
            ["subjects[0].namespace: Required value"]
        );
        assert!(
            errors(
                RbacKind::RoleBinding,
                binding(
                    role_ref.clone(),
                    json!([{"kind": "ServiceAccount", "name": "sa"}])
                )
            )
            .is_empty()
        );
        assert_eq!(
            errors(
                RbacKind::RoleBinding,
                binding(role_ref.clone(), json!([
                    {"kind": "Robot", "name": "r"},
                    {"kind": "User", "name": ""},
                    {"kind": "Group", "name": "g", "apiGroup": "example.com"},
                    {"kind": "ServiceAccount", "name": "Bad_Name", "apiGroup": GROUP},
                ]))
            ),
            [
                r#"subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#.to_owned(),
                "subjects[1].name: Required value".to_owned(),
                format!(r#"subjects[2].apiGroup: Unsupported value: "example.com": supported values: "{GROUP}""#),
                r#"subjects[3].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#.to_owned(),
                r#"subjects[3].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: """#.to_owned(),
            ]
        );
        assert_eq!(
            errors(
                RbacKind::RoleBinding,
                binding(json!({"apiGroup": "x", "kind": "Policy", "name": "a/b"}), json!([]))
            ),
            [
                format!(r#"roleRef.apiGroup: Unsupported value: "x": supported values: "{GROUP}""#),
                r#"roleRef.kind: Unsupported value: "Policy": supported values: "Role", "ClusterRole""#.to_owned(),
                r#"roleRef.name: Invalid value: "a/b": may not contain '/'"#.to_owned(),
            ]
        );
    }

    // R-ACC-179
    #[test]
    fn role_ref_cannot_change() {
        let strategy = RbacStrategy::new(RbacKind::RoleBinding, Flavor::Kubernetes);
        let old = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}});
        let new = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "edit"}});
        let errs: Vec<String> = strategy
            .validate_update(&new, &old)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            [format!(
                r#"roleRef: Invalid value: {{"apiGroup":"{GROUP}","kind":"ClusterRole","name":"edit"}}: cannot change roleRef"#
            )]
        );
        assert!(strategy.validate_update(&old, &old).is_empty());
        assert_eq!(
            strategy.name_rule().check("system:controller:x", false),
            Vec::<String>::new()
        );
        assert_eq!(strategy.name_rule().check("..", false), ["may not be '..'"]);
    }
}
