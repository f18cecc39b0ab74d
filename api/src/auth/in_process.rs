//! Requests the server's own code makes through its own router (the leader-only controllers):
//! [`InProcessUser`] is a request extension naming who makes the request, which only code in
//! the process can insert (the HTTPS layer builds requests from the wire and never inserts
//! it), read by [`InProcessAuthenticator`]. A built-in controller acts as its ServiceAccount
//! of the system namespace ([`controller_user`]), as kube-controller-manager does with
//! `--use-service-account-credentials`, so the default RBAC bindings name it. Until RBAC grants
//! roles, [`ControllerRolesAuthorizer`] grants each controller identity exactly the rules of
//! its Kubernetes bootstrap-policy role.

use k8s_openapi::api::authorization::v1::ResourceRule;

use super::Attributes;
use super::AuthContext;
use super::Authenticator;
use super::AuthnOutcome;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::SERVICE_ACCOUNTS;
use super::UserInfo;
use crate::flavor::Flavor;

/// The ServiceAccount the token-cleaner controller acts as.
pub const TOKEN_CLEANER_ACCOUNT: &str = "token-cleaner";

/// The ServiceAccount the bootstrap-signer controller acts as.
pub const BOOTSTRAP_SIGNER_ACCOUNT: &str = "bootstrap-signer";

/// The user of the built-in controller whose ServiceAccount in `flavor`'s system namespace
/// is `account`: `system:serviceaccount:<namespace>:<account>`, in the ServiceAccount groups.
pub fn controller_user(flavor: Flavor, account: &str) -> UserInfo {
    let namespace = flavor.system_namespace();
    UserInfo {
        name: format!("system:serviceaccount:{namespace}:{account}"),
        groups: vec![
            SERVICE_ACCOUNTS.to_owned(),
            format!("{SERVICE_ACCOUNTS}:{namespace}"),
        ],
        ..UserInfo::default()
    }
}

/// The user the server's own in-process requests are made as when they act for the server
/// itself (kube-apiserver's loopback client); it is given the group `system:masters`.
pub const LOOPBACK_USER: &str = "system:apiserver";

/// The ConfigMap the bootstrap signer keeps in the public namespace.
pub const CLUSTER_INFO: &str = "cluster-info";

/// Who an in-process request is from: inserted as a request extension by in-process callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InProcessUser(pub UserInfo);

/// Authenticates requests carrying an [`InProcessUser`] extension as that user.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcessAuthenticator;

#[async_trait::async_trait]
impl Authenticator for InProcessAuthenticator {
    async fn authenticate(
        &self,
        request: &http::request::Parts,
        _context: &AuthContext<'_>,
    ) -> AuthnOutcome {
        match request.extensions.get::<InProcessUser>() {
            Some(InProcessUser(user)) => AuthnOutcome::Authenticated(user.clone()),
            None => AuthnOutcome::NoCredentials,
        }
    }
}

/// Which namespace a rule of a controller's role applies in.
#[derive(Debug, Clone, Copy)]
enum Scope {
    System,
    Public,
}

/// One rule of a namespaced role: verbs on core resources, optionally only some names.
struct Rule {
    account: &'static str,
    scope: Scope,
    events: bool,
    resource: &'static str,
    verbs: &'static [&'static str],
    names: &'static [&'static str],
}

/// The rules of the bootstrap-policy roles `system:controller:token-cleaner` (system
/// namespace) and `system:controller:bootstrap-signer` (system and public namespaces).
const RULES: &[Rule] = &[
    Rule {
        account: TOKEN_CLEANER_ACCOUNT,
        scope: Scope::System,
        events: false,
        resource: "secrets",
        verbs: &["get", "list", "watch", "delete"],
        names: &[],
    },
    Rule {
        account: TOKEN_CLEANER_ACCOUNT,
        scope: Scope::System,
        events: true,
        resource: "events",
        verbs: &["create", "update", "patch"],
        names: &[],
    },
    Rule {
        account: BOOTSTRAP_SIGNER_ACCOUNT,
        scope: Scope::System,
        events: false,
        resource: "secrets",
        verbs: &["get", "list", "watch"],
        names: &[],
    },
    Rule {
        account: BOOTSTRAP_SIGNER_ACCOUNT,
        scope: Scope::Public,
        events: false,
        resource: "configmaps",
        verbs: &["get", "list", "watch"],
        names: &[],
    },
    Rule {
        account: BOOTSTRAP_SIGNER_ACCOUNT,
        scope: Scope::Public,
        events: false,
        resource: "configmaps",
        verbs: &["update"],
        names: &[CLUSTER_INFO],
    },
    Rule {
        account: BOOTSTRAP_SIGNER_ACCOUNT,
        scope: Scope::Public,
        events: true,
        resource: "events",
        verbs: &["create", "update", "patch"],
        names: &[],
    },
];

/// Allows the controller identities what their Kubernetes bootstrap-policy roles allow; no
/// opinion on anything else.
#[derive(Debug, Clone)]
pub struct ControllerRolesAuthorizer {
    flavor: Flavor,
    events_group: String,
}

impl ControllerRolesAuthorizer {
    /// The authorizer of the controller roles in `flavor`'s namespaces and groups.
    pub fn new(flavor: Flavor) -> Self {
        Self {
            flavor,
            events_group: format!("events.{}", flavor.group_domain()),
        }
    }

    fn namespace(&self, scope: Scope) -> &'static str {
        match scope {
            Scope::System => self.flavor.system_namespace(),
            Scope::Public => self.flavor.public_namespace(),
        }
    }

    fn grants(&self, rule: &Rule, attributes: &Attributes<'_>) -> bool {
        let request = attributes.request;
        let namespace = self.namespace(rule.scope);
        let group_ok =
            request.api_group.is_empty() || (rule.events && request.api_group == self.events_group);
        attributes.user.name == controller_user(self.flavor, rule.account).name
            && request.is_resource_request
            && request.namespace == namespace
            && group_ok
            && request.resource == rule.resource
            && request.subresource.is_empty()
            && rule.verbs.contains(&request.verb.as_str())
            && (rule.names.is_empty() || rule.names.contains(&request.name.as_str()))
    }
}

#[async_trait::async_trait]
impl Authorizer for ControllerRolesAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        if RULES.iter().any(|rule| self.grants(rule, attributes)) {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }

    /// The rules of `user`'s role in `namespace` (none for anyone but a controller).
    async fn rules(&self, user: &UserInfo, namespace: &str) -> Option<Rules> {
        let resource = RULES
            .iter()
            .filter(|rule| {
                controller_user(self.flavor, rule.account).name == user.name
                    && self.namespace(rule.scope) == namespace
            })
            .map(|rule| {
                let mut groups = vec![String::new()];
                if rule.events {
                    groups.push(self.events_group.clone());
                }
                let names = (!rule.names.is_empty())
                    .then(|| rule.names.iter().map(|n| (*n).to_owned()).collect());
                ResourceRule {
                    verbs: rule.verbs.iter().map(|v| (*v).to_owned()).collect(),
                    api_groups: Some(groups),
                    resources: Some(vec![rule.resource.to_owned()]),
                    resource_names: names,
                }
            })
            .collect();
        Some(Rules {
            resource,
            ..Rules::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;
    use crate::request::QueryParams;
    use crate::request::RequestInfo;

    async fn allowed(user: &str, method: Method, path: &str) -> bool {
        let user = controller_user(Flavor::Kubernetes, user);
        let request = RequestInfo::parse(&method, path, &QueryParams::default());
        let attributes = Attributes {
            user: &user,
            request: &request,
        };
        ControllerRolesAuthorizer::new(Flavor::Kubernetes)
            .authorize(&attributes)
            .await
            == Decision::Allow
    }

    // The controller identities (their ServiceAccounts' users) get exactly their
    // bootstrap-policy roles' rules.
    #[tokio::test]
    async fn controllers_get_their_roles_rules_only() {
        let system_secrets = "/api/v1/namespaces/kube-system/secrets";
        let token = "/api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef";
        let cluster_info = "/api/v1/namespaces/kube-public/configmaps/cluster-info";
        let events = "/apis/events.k8s.io/v1/namespaces/kube-public/events";
        let cleaner = TOKEN_CLEANER_ACCOUNT;
        let signer = BOOTSTRAP_SIGNER_ACCOUNT;
        for (user, method, path) in [
            (cleaner, Method::GET, system_secrets),
            (cleaner, Method::DELETE, token),
            (
                cleaner,
                Method::POST,
                "/api/v1/namespaces/kube-system/events",
            ),
            (signer, Method::GET, system_secrets),
            (signer, Method::GET, cluster_info),
            (signer, Method::PUT, cluster_info),
            (signer, Method::POST, events),
        ] {
            assert!(
                allowed(user, method.clone(), path).await,
                "{user} {method} {path}"
            );
        }
        for (user, method, path) in [
            (cleaner, Method::POST, system_secrets),
            (
                cleaner,
                Method::DELETE,
                "/api/v1/namespaces/default/secrets/x",
            ),
            (cleaner, Method::GET, cluster_info),
            (signer, Method::DELETE, token),
            (
                signer,
                Method::PUT,
                "/api/v1/namespaces/kube-public/configmaps/other",
            ),
            (
                signer,
                Method::PUT,
                "/api/v1/namespaces/kube-system/configmaps/cluster-info",
            ),
            (
                signer,
                Method::POST,
                "/apis/events.k8s.io/v1/namespaces/kube-system/events",
            ),
            ("other", Method::GET, system_secrets),
        ] {
            assert!(
                !allowed(user, method.clone(), path).await,
                "{user} {method} {path}"
            );
        }
    }
}
