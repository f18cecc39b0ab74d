//! What an authorizer decides on (R-ACC-097): the user plus the request's attributes.

use super::UserInfo;
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
