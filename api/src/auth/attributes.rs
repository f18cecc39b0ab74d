//! What an authorizer decides on (R-ACC-097): the user plus the request's attributes.

use super::UserInfo;
use crate::error::ApiError;
use crate::group::GroupResource;
use crate::request::RequestInfo;

/// The attributes of one request, as authorizers see them.
#[derive(Debug, Clone, Copy)]
pub struct Attributes<'a> {
    /// The authenticated user.
    pub user: &'a UserInfo,
    /// Where the request points: resource or path, verb, namespace, group, name, ...
    pub request: &'a RequestInfo,
}

impl Attributes<'_> {
    /// 403 Forbidden for these attributes, worded as Kubernetes words it, with `reason`
    /// after the message when there is one.
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let mut message = self.forbidden_message();
        if !reason.is_empty() {
            message = format!("{message}: {reason}");
        }
        let r = self.request;
        let resource = r
            .is_resource_request
            .then(|| GroupResource::new(r.api_group.clone(), r.resource.clone()));
        ApiError::Forbidden {
            resource,
            name: r.name.clone(),
            reason: message,
        }
    }

    /// Kubernetes' forbidden message for these attributes, without the reason
    /// (`User "bob" cannot get resource "configmaps" in API group "" in the namespace "x"`).
    pub fn forbidden_message(&self) -> String {
        let user = &self.user.name;
        let r = self.request;
        let verb = r.verb.as_str();
        if !r.is_resource_request {
            return format!("User {user:?} cannot {verb} path {:?}", r.path);
        }
        let mut resource = r.resource.clone();
        if !r.subresource.is_empty() {
            resource = format!("{resource}/{}", r.subresource);
        }
        let group = &r.api_group;
        if r.namespace.is_empty() {
            format!(
                "User {user:?} cannot {verb} resource {resource:?} in API group {group:?} at the cluster scope"
            )
        } else {
            format!(
                "User {user:?} cannot {verb} resource {resource:?} in API group {group:?} in the namespace {:?}",
                r.namespace
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;
    use crate::request::QueryParams;

    fn message(method: Method, path: &str) -> String {
        let user = UserInfo {
            name: "bob".into(),
            ..UserInfo::default()
        };
        let request = RequestInfo::parse(&method, path, &QueryParams::default());
        Attributes {
            user: &user,
            request: &request,
        }
        .forbidden_message()
    }

    // R-ACC-097, R-RES-005, R-RES-016
    #[test]
    fn forbidden_messages_name_verb_resource_and_scope() {
        assert_eq!(
            message(Method::GET, "/api/v1/namespaces/a/pods/p/log"),
            r#"User "bob" cannot get resource "pods/log" in API group "" in the namespace "a""#
        );
        assert_eq!(
            message(Method::DELETE, "/apis/rbac.example/v1/clusterroles"),
            r#"User "bob" cannot deletecollection resource "clusterroles" in API group "rbac.example" at the cluster scope"#
        );
        assert_eq!(
            message(Method::GET, "/healthz/x"),
            r#"User "bob" cannot get path "/healthz/x""#
        );
    }
}
