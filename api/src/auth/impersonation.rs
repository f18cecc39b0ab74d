//! Impersonation (spec 001 "Impersonation"; kube-apiserver's impersonation filter and
//! constrained impersonation, KEP-5284): the pipeline step after authentication that lets a
//! caller act as the user its `Impersonate-*` headers name, once the authorizer chain allowed
//! every part of that user.
//!
//! Without the `ConstrainedImpersonation` gate only the legacy check runs: the verb
//! `impersonate` on `users`, `serviceaccounts` and `groups` (core group), and on `uids` and
//! `userextras/<key>` (`authentication.<d>`), the value as the resource name. With it, the
//! constrained modes are tried first, in kube-apiserver's order (associated node, arbitrary
//! node, service account, user info); each needs `impersonate-on:<mode>:<verb>` on the request
//! itself and `impersonate:<mode>` on every part of the user (in `authentication.<d>`). The
//! legacy check comes last, and when every mode refuses, the first refusal is the answer.

use std::collections::BTreeMap;

use http::HeaderMap;

use super::Attributes;
use super::AuthorizerChain;
use super::SYSTEM_AUTHENTICATED;
use super::SYSTEM_MASTERS;
use super::UserInfo;
use crate::audit;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::validation::FieldError;
use crate::validation::validate_dns_label;
use crate::validation::validate_dns_subdomain;

const USER_HEADER: &str = "impersonate-user";
const UID_HEADER: &str = "impersonate-uid";
const GROUP_HEADER: &str = "impersonate-group";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// The user of requests without credentials.
const ANONYMOUS: &str = "system:anonymous";
/// The group of requests without credentials.
const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The one group of an impersonated node.
const NODES: &str = "system:nodes";
const NODE_PREFIX: &str = "system:node:";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// From this many groups or extra values on, a constrained mode first asks for all at once.
const MANY: usize = 4;
/// The characters of the path part of an extra key (`IsDomainPrefixedPath`).
const PATH_CHARACTERS: &str = "-/._~%!$&'()*+,;=:";

/// One way of being allowed to impersonate, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A service account acting as the node its pod runs on.
    AssociatedNode,
    /// Any node, by name.
    ArbitraryNode,
    /// A service account, by name.
    ServiceAccount,
    /// Any other user, with groups, uid and extras.
    UserInfo,
    /// The verb `impersonate`, which grants impersonation for every request.
    Legacy,
}

impl Mode {
    /// Every mode, in the order kube-apiserver tries them.
    const ALL: [Mode; 5] = [
        Mode::AssociatedNode,
        Mode::ArbitraryNode,
        Mode::ServiceAccount,
        Mode::UserInfo,
        Mode::Legacy,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::AssociatedNode => "associated-node",
            Self::ArbitraryNode => "arbitrary-node",
            Self::ServiceAccount => "serviceaccount",
            Self::UserInfo => "user-info",
            Self::Legacy => "",
        }
    }

    /// The verb checked on the impersonated user's parts.
    fn verb(self) -> String {
        match self {
            Self::Legacy => "impersonate".to_owned(),
            mode => format!("impersonate:{}", mode.name()),
        }
    }

    fn constrained(self) -> bool {
        self != Self::Legacy
    }
}

/// The impersonation step: who a request acts as.
#[derive(Clone)]
pub struct Impersonation {
    authz: AuthorizerChain,
    flavor: Flavor,
    constrained: bool,
    /// `authentication.<d>`.
    authentication: String,
}

impl Impersonation {
    /// Impersonation checked with `authz` in `flavor`, with the constrained modes when
    /// `constrained` (the `ConstrainedImpersonation` gate).
    pub fn new(authz: AuthorizerChain, flavor: Flavor, constrained: bool) -> Self {
        Self {
            authz,
            flavor,
            constrained,
            authentication: format!("authentication.{}", flavor.group_domain()),
        }
    }

    /// The user the request described by `headers` and `request` acts as: `requestor` without
    /// `Impersonate-User`, else the user the headers name once `requestor` may impersonate it
    /// (named in the audit event, R-ACC-157); the impersonation headers are then removed.
    /// 400 for a group, uid or extra without a user (R-ACC-153), 403 when not allowed
    /// (R-ACC-154).
    pub async fn impersonate(
        &self,
        headers: &mut HeaderMap,
        requestor: UserInfo,
        request: &RequestInfo,
    ) -> Result<UserInfo, ApiError> {
        let Some(wanted) = self.wanted(headers)? else {
            return Ok(requestor);
        };
        strip(headers);
        let mut first_refusal = None;
        for mode in Mode::ALL {
            if (self.constrained || !mode.constrained()) && self.applies(mode, &wanted, &requestor)
            {
                match self.check_mode(mode, &wanted, &requestor, request).await {
                    Ok(user) => {
                        let constraint = mode.constrained().then(|| mode.verb());
                        audit::impersonated(&user, constraint.as_deref());
                        return Ok(user);
                    }
                    Err(refusal) => {
                        first_refusal.get_or_insert(refusal);
                    }
                }
            }
        }
        Err(first_refusal
            .unwrap_or_else(|| ApiError::Internal("all impersonation modes failed".to_owned())))
    }

    /// The user the headers ask for, unchecked; `None` without `Impersonate-User`.
    fn wanted(&self, headers: &HeaderMap) -> Result<Option<UserInfo>, ApiError> {
        let text = |v: &http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
        let first = |name| headers.get(name).map(text).unwrap_or_default();
        let mut wanted = UserInfo {
            name: first(USER_HEADER),
            uid: first(UID_HEADER),
            groups: headers.get_all(GROUP_HEADER).iter().map(text).collect(),
            extra: BTreeMap::new(),
        };
        for (name, value) in headers {
            if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
                let key = unescape(&key.to_lowercase());
                wanted.extra.entry(key).or_default().push(text(value));
            }
        }
        if !wanted.name.is_empty() {
            return Ok(Some(wanted));
        }
        if wanted.uid.is_empty() && wanted.groups.is_empty() && wanted.extra.is_empty() {
            return Ok(None);
        }
        Err(ApiError::BadRequest(if self.constrained {
            format!(
                "requested {} without impersonating a user name",
                go_user(&wanted)
            )
        } else {
            format!(
                "requested {} without impersonating a user",
                self.go_references(&wanted)
            )
        }))
    }

    /// Whether `mode` can impersonate `wanted` for `requestor` at all (constrained modes are
    /// each for one kind of user).
    fn applies(&self, mode: Mode, wanted: &UserInfo, requestor: &UserInfo) -> bool {
        let only_name =
            wanted.uid.is_empty() && wanted.groups.is_empty() && wanted.extra.is_empty();
        let node = node_name(&wanted.name);
        let account = service_account(&wanted.name).is_some();
        match mode {
            Mode::AssociatedNode => {
                only_name
                    && service_account(&requestor.name).is_some()
                    && node.is_some_and(|n| {
                        requestor.extra.get(&self.node_name_key()) == Some(&vec![n.to_owned()])
                    })
            }
            Mode::ArbitraryNode => only_name && node.is_some(),
            Mode::ServiceAccount => only_name && account,
            Mode::UserInfo => node.is_none() && !account,
            Mode::Legacy => true,
        }
    }

    /// The user `requestor` may act as through `mode`, or the first refusal.
    async fn check_mode(
        &self,
        mode: Mode,
        wanted: &UserInfo,
        requestor: &UserInfo,
        request: &RequestInfo,
    ) -> Result<UserInfo, ApiError> {
        let asker = if mode == Mode::AssociatedNode {
            self.node_agent(requestor)
        } else {
            requestor.clone()
        };
        if mode.constrained() {
            let mut on = request.clone();
            on.verb = Verb::Other(format!(
                "impersonate-on:{}:{}",
                mode.name(),
                request.verb.as_str()
            ));
            self.check(&asker, &on).await?;
        }
        let verb = mode.verb();
        let mut user = wanted.clone();
        self.check_name(mode, &verb, &asker, &mut user).await?;
        if self.constrained {
            self.check_uid(&verb, &asker, &wanted.uid).await?;
        }
        self.check_groups(mode, &verb, &asker, &wanted.groups)
            .await?;
        self.check_extra(mode, &verb, &asker, &wanted.extra).await?;
        if !self.constrained {
            self.check_uid(&verb, &asker, &wanted.uid).await?;
        }
        if user.name == ANONYMOUS {
            if !user.in_group(UNAUTHENTICATED) {
                user.groups.push(UNAUTHENTICATED.to_owned());
            }
        } else if !user.in_group(UNAUTHENTICATED) && !user.in_group(SYSTEM_AUTHENTICATED) {
            user.groups.push(SYSTEM_AUTHENTICATED.to_owned());
        }
        Ok(user)
    }

    /// Checks the user name: a node (constrained modes) or service account as that resource,
    /// anyone else as `users`; a node or a service account impersonated without groups gets
    /// its own.
    async fn check_name(
        &self,
        mode: Mode,
        verb: &str,
        asker: &UserInfo,
        user: &mut UserInfo,
    ) -> Result<(), ApiError> {
        let mut target = target(verb, self.names_group(mode), "users", &user.name);
        if mode.constrained()
            && let Some(node) = node_name(&user.name)
        {
            target.resource = "nodes".to_owned();
            target.name = if mode == Mode::AssociatedNode {
                "*".to_owned()
            } else {
                node.to_owned()
            };
            if !user.groups.is_empty() {
                let reason = format!(
                    "when impersonating a node, cannot impersonate groups {}",
                    go_quoted(&user.groups)
                );
                return Err(self.refuse(asker, &target, &reason));
            }
            user.groups = vec![NODES.to_owned()];
        }
        if let Some((namespace, name)) = service_account(&user.name) {
            target.resource = "serviceaccounts".to_owned();
            target.namespace = namespace.to_owned();
            target.name = name.to_owned();
            if mode.constrained() && !user.groups.is_empty() {
                let reason = format!(
                    "when impersonating a service account, cannot impersonate groups {}",
                    go_quoted(&user.groups)
                );
                return Err(self.refuse(asker, &target, &reason));
            }
            if user.groups.is_empty() {
                user.groups = vec![
                    SERVICE_ACCOUNTS.to_owned(),
                    format!("{SERVICE_ACCOUNTS}:{namespace}"),
                ];
            }
        }
        self.check(asker, &target).await
    }

    async fn check_uid(&self, verb: &str, asker: &UserInfo, uid: &str) -> Result<(), ApiError> {
        if uid.is_empty() {
            return Ok(());
        }
        self.check(asker, &target(verb, &self.authentication, "uids", uid))
            .await
    }

    async fn check_groups(
        &self,
        mode: Mode,
        verb: &str,
        asker: &UserInfo,
        groups: &[String],
    ) -> Result<(), ApiError> {
        if groups.is_empty() {
            return Ok(());
        }
        let mut target = target(verb, self.names_group(mode), "groups", "");
        if mode.constrained() {
            if groups.iter().any(String::is_empty) {
                let reason = "impersonating the empty string group is not allowed";
                return Err(self.refuse(asker, &target, reason));
            }
            if groups.iter().any(|g| g == SYSTEM_MASTERS) {
                target.name = SYSTEM_MASTERS.to_owned();
                let reason = format!("impersonating the {SYSTEM_MASTERS} group is not allowed");
                return Err(self.refuse(asker, &target, &reason));
            }
            if groups.len() >= MANY {
                target.name = "*".to_owned();
                if self.check(asker, &target).await.is_ok() {
                    return Ok(());
                }
            }
        }
        for group in groups {
            target.name = group.clone();
            self.check(asker, &target).await?;
        }
        Ok(())
    }

    async fn check_extra(
        &self,
        mode: Mode,
        verb: &str,
        asker: &UserInfo,
        extra: &BTreeMap<String, Vec<String>>,
    ) -> Result<(), ApiError> {
        if extra.is_empty() {
            return Ok(());
        }
        let mut target = target(verb, &self.authentication, "userextras", "");
        if mode.constrained() {
            if let Err(reason) = validate_extra(extra) {
                return Err(self.refuse(asker, &target, &reason));
            }
            if extra.len() >= MANY || extra.values().map(Vec::len).sum::<usize>() >= MANY {
                target.subresource = "*".to_owned();
                target.name = "*".to_owned();
                if self.check(asker, &target).await.is_ok() {
                    return Ok(());
                }
            }
        }
        for (key, values) in extra {
            target.subresource = key.clone();
            for value in values {
                target.name = value.clone();
                self.check(asker, &target).await?;
            }
        }
        Ok(())
    }

    /// The API group of the `users` and `groups` checks: the core group for the legacy verb,
    /// `authentication.<d>` for the constrained ones.
    fn names_group(&self, mode: Mode) -> &str {
        if mode.constrained() {
            &self.authentication
        } else {
            ""
        }
    }

    /// Asks the chain whether `asker` may do what `target` describes.
    async fn check(&self, asker: &UserInfo, target: &RequestInfo) -> Result<(), ApiError> {
        let attributes = Attributes {
            user: asker,
            request: target,
        };
        self.authz.authorize(&attributes).await
    }

    /// The 403 of `asker` on `target`, for `reason`.
    fn refuse(&self, asker: &UserInfo, target: &RequestInfo, reason: &str) -> ApiError {
        Attributes {
            user: asker,
            request: target,
        }
        .forbidden(reason)
    }

    /// The extra key of the node a service account's pod runs on.
    fn node_name_key(&self) -> String {
        format!("authentication.{}/node-name", self.flavor.label_domain())
    }

    /// `requestor` as the associated-node checks see it: its extra values dropped, only their
    /// keys kept, so that one grant covers the agent on every node.
    fn node_agent(&self, requestor: &UserInfo) -> UserInfo {
        let key = format!(
            "authentication.{}/associated-node-keys",
            self.flavor.label_domain()
        );
        let keys = requestor.extra.keys().cloned().collect();
        UserInfo {
            extra: BTreeMap::from([(key, keys)]),
            ..requestor.clone()
        }
    }

    /// Go's `%v` of the legacy filter's object references (groups, extras, uid), as its
    /// message prints them.
    fn go_references(&self, wanted: &UserInfo) -> String {
        let version = format!("{}/v1", self.authentication);
        let reference = |kind: &str, name: &str, api_version: &str, field: &str| {
            format!("{{{kind}  {name}  {api_version}  {field}}}")
        };
        let mut references: Vec<String> = wanted
            .groups
            .iter()
            .map(|g| reference("Group", g, "", ""))
            .collect();
        for (key, values) in &wanted.extra {
            for value in values {
                references.push(reference("UserExtra", value, &version, key));
            }
        }
        if !wanted.uid.is_empty() {
            references.push(reference("UID", &wanted.uid, &version, ""));
        }
        format!("[{}]", references.join(" "))
    }
}

/// Removes every impersonation header, so that no later step sees them.
fn strip(headers: &mut HeaderMap) {
    let extras: Vec<_> = headers
        .keys()
        .filter(|name| name.as_str().starts_with(EXTRA_PREFIX))
        .cloned()
        .collect();
    for name in extras {
        headers.remove(name);
    }
    for name in [USER_HEADER, UID_HEADER, GROUP_HEADER] {
        headers.remove(name);
    }
}

/// An impersonation check: `verb` on `resource` in `group` (`v1`), named `name`.
fn target(verb: &str, group: &str, resource: &str, name: &str) -> RequestInfo {
    let mut info = RequestInfo::non_resource("", Verb::Other(verb.to_owned()));
    info.is_resource_request = true;
    info.api_prefix = if group.is_empty() { "api" } else { "apis" }.to_owned();
    info.api_group = group.to_owned();
    info.api_version = "v1".to_owned();
    info.resource = resource.to_owned();
    info.name = name.to_owned();
    info
}

/// The node of a `system:node:<name>` user, when `<name>` is a valid node name.
fn node_name(user: &str) -> Option<&str> {
    user.strip_prefix(NODE_PREFIX)
        .filter(|name| validate_dns_subdomain(name).is_empty())
}

/// The namespace and name of a `system:serviceaccount:<namespace>:<name>` user, when both are
/// valid.
fn service_account(user: &str) -> Option<(&str, &str)> {
    let (namespace, name) = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?.split_once(':')?;
    let valid = !name.contains(':')
        && validate_dns_label(namespace).is_empty()
        && validate_dns_subdomain(name).is_empty();
    valid.then_some((namespace, name))
}

/// Percent-decodes an extra key as Go's `url.PathUnescape`; a key with a malformed escape (or
/// that is not UTF-8 once decoded) is kept as it is.
fn unescape(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte != b'%' {
            out.push(byte);
            i += 1;
            continue;
        }
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        let Some(decoded) = hex else {
            return key.to_owned();
        };
        out.push(decoded);
        i += 3;
    }
    String::from_utf8(out).unwrap_or_else(|_| key.to_owned())
}

/// Why extras cannot be impersonated through a constrained mode, if they cannot.
fn validate_extra(extra: &BTreeMap<String, Vec<String>>) -> Result<(), String> {
    for (key, values) in extra {
        if key.is_empty() {
            return Err("impersonating the empty string key in extra is not allowed".to_owned());
        }
        let errors = domain_prefixed_path("extra.key", key);
        if !errors.is_empty() {
            let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
            let aggregate = match errors.as_slice() {
                [one] => one.clone(),
                many => format!("[{}]", many.join(", ")),
            };
            return Err(format!(
                "impersonating an invalid key in extra is not allowed: {aggregate}"
            ));
        }
        if *key != key.to_lowercase() {
            return Err(format!(
                "impersonating a non-lowercase key in extra is not allowed: {key:?}"
            ));
        }
        if values.is_empty() {
            return Err("impersonating empty values in extra is not allowed".to_owned());
        }
        if values.iter().any(String::is_empty) {
            return Err("impersonating the empty string value in extra is not allowed".to_owned());
        }
    }
    Ok(())
}

/// The problems of `path` as a domain-prefixed path (`acme.io/foo`).
fn domain_prefixed_path(field: &str, path: &str) -> Vec<FieldError> {
    let split = path
        .split_once('/')
        .filter(|(host, rest)| !host.is_empty() && !rest.is_empty());
    let Some((host, rest)) = split else {
        let detail = "must be a domain-prefixed path (such as \"acme.io/foo\")";
        return vec![FieldError::invalid(field, path, detail)];
    };
    let mut errors: Vec<FieldError> = validate_dns_subdomain(host)
        .into_iter()
        .map(|e| FieldError::invalid(field, host, e))
        .collect();
    let valid = |c: char| c.is_ascii_alphanumeric() || PATH_CHARACTERS.contains(c);
    if !rest.chars().all(valid) {
        let detail =
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')";
        errors.push(FieldError::invalid(field, rest, detail));
    }
    errors
}

/// Go's `%q` of a list of strings: `["a" "b"]`.
fn go_quoted(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// Go's `%#v` of the wanted `user.DefaultInfo`, as the constrained filter's message prints it.
fn go_user(user: &UserInfo) -> String {
    let strings = |values: &[String]| {
        let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
        format!("[]string{{{}}}", quoted.join(", "))
    };
    let groups = if user.groups.is_empty() {
        "[]string(nil)".to_owned()
    } else {
        strings(&user.groups)
    };
    let extra = if user.extra.is_empty() {
        "map[string][]string(nil)".to_owned()
    } else {
        let entries: Vec<String> = user
            .extra
            .iter()
            .map(|(k, v)| format!("{k:?}:{}", strings(v)))
            .collect();
        format!("map[string][]string{{{}}}", entries.join(", "))
    };
    format!(
        "&user.DefaultInfo{{Name:{:?}, UID:{:?}, Groups:{groups}, Extra:{extra}}}",
        user.name, user.uid
    )
}

#[cfg(test)]
#[path = "impersonation_test.rs"]
mod tests;
