//! The CEL authorizer library (issue 15, item 9; R-VER-029..033): the `authorizer` variable
//! of Kubernetes' CEL libraries and its functions, which ask the authorization chain about a
//! principal. Admission policies and authorization match conditions are its users.
//!
//! ```text
//! authorizer.path('/healthz').check('get').allowed()
//! authorizer.group('apps').resource('deployments').subresource('scale')
//!     .namespace('ns').name('web').check('update').reason()
//! authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1')
//!     .labelSelector('app=web').check('list').allowed()
//! authorizer.serviceAccount('ns', 'builder').group('').resource('secrets').check('get').denied()
//! authorizer.requestResource.check('delete').errored()
//! ```
//!
//! `path`, `group`, `serviceAccount` (on the authorizer), `resource` (on a group check),
//! `subresource`, `namespace`, `name`, `fieldSelector`, `labelSelector` (on a resource check),
//! `check` (on a path or resource check) and `allowed`, `denied`, `reason`, `errored`, `error`
//! (on a decision), as Kubernetes' `authz` and `authzSelectors` libraries define them; selectors
//! always reach the authorizers, as `AuthorizeWithSelectors` is locked on in the served
//! release. `denied` is Apiary's addition: whether a mode denied outright, as a review's
//! `status.denied` says. The chain answers every failure as a decision, so `errored()` is
//! false and `error()` empty.
//!
//! ### Evaluation: synchronous CEL over an asynchronous chain
//! CEL calls `check` synchronously while [`AuthorizerChain::decide`] is asynchronous (a
//! webhook mode does network IO), and blocking a runtime thread on it would deadlock the
//! single-threaded runtimes of tests and the simulation. So [`CelAuthorizer::evaluate`] runs
//! the expression in rounds: a `check` whose answer is known returns it, one that is not is
//! recorded and fails that round. Between rounds the chain answers the recorded checks (with
//! `.await`); the next round runs with every answer so far. A round that records nothing is
//! final: its result, or [`EvalError::CostLimitExceeded`] when its checks exceeded the budget.
//!
//! Every `check` is charged [`CHECK_COST`] against the evaluation's budget (Kubernetes' fixed
//! cost, which allows two checks in the default per-expression budget [`PER_CALL_LIMIT`]), so
//! a round makes at most N = `budget / CHECK_COST` checks. A round records only checks no
//! earlier round asked, so the rounds end. Evaluation is deterministic except for the order of a map's keys
//! (fixed neither by CEL nor by the `cel` crate), so for an expression whose checks do not
//! follow that order each round repeats the previous one up to its first unanswered check and
//! gets past it: at most N rounds record checks, round k at most N - k + 1 of them, and the
//! chain is asked at most N(N+1)/2 checks. The chain is asked at most N(N+1) per evaluation;
//! the slack serves expressions whose checks follow a map's order, and an evaluation that
//! would ask more fails as over budget.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use cel::ExecutionError;
use cel::FunctionContext;
use cel::ResolveResult;
use cel::Value;
use cel::extractors::This;
use cel::objects::Opaque;

use super::EvalError;
use super::Program;
use super::evaluate_with;
use crate::auth::Attributes;
use crate::auth::AuthorizerChain;
use crate::auth::Decision;
use crate::auth::SERVICE_ACCOUNTS;
use crate::auth::UserInfo;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::validation::validate_dns_label;
use crate::validation::validate_dns_subdomain;

/// The name of the variable expressions reach the library through.
pub const AUTHORIZER_VARIABLE: &str = "authorizer";

/// The cost charged for one `check` (Kubernetes' fixed authorization check cost).
pub const CHECK_COST: u64 = 350_000;

/// The default budget of one evaluation (Kubernetes' per-expression runtime cost limit).
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// The hidden variable holding the principal of a round (`@` names cannot be written in CEL).
const HANDLE: &str = "@authorizer";

/// Why a `check` failed its round: its answer is not known yet.
const UNANSWERED: &str = "authorization check not answered yet";

const AUTHORIZER_TYPE: &str = "kubernetes.authorization.Authorizer";
const PATH_CHECK_TYPE: &str = "kubernetes.authorization.PathCheck";
const GROUP_CHECK_TYPE: &str = "kubernetes.authorization.GroupCheck";
const RESOURCE_CHECK_TYPE: &str = "kubernetes.authorization.ResourceCheck";
const DECISION_TYPE: &str = "kubernetes.authorization.Decision";

/// The chain and principal an expression's authorization checks go to.
#[derive(Clone)]
pub struct CelAuthorizer {
    chain: AuthorizerChain,
    user: Arc<UserInfo>,
    request_resource: Option<ResourceTarget>,
    budget: u64,
}

impl CelAuthorizer {
    /// Checks of `user` (the request's principal) asked of `chain`, within
    /// [`PER_CALL_LIMIT`].
    pub fn new(chain: AuthorizerChain, user: UserInfo) -> Self {
        Self {
            chain,
            user: Arc::new(user),
            request_resource: None,
            budget: PER_CALL_LIMIT,
        }
    }

    /// Offers `authorizer.requestResource`: a resource check of the resource, subresource,
    /// namespace and name `request` addresses (the request being admitted).
    pub fn with_request_resource(mut self, request: &RequestInfo) -> Self {
        self.request_resource = Some(ResourceTarget {
            group: request.api_group.clone(),
            resource: request.resource.clone(),
            subresource: request.subresource.clone(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
            ..ResourceTarget::default()
        });
        self
    }

    /// Sets the evaluation's cost budget (each `check` costs [`CHECK_COST`]).
    pub fn with_budget(mut self, budget: u64) -> Self {
        self.budget = budget;
        self
    }

    /// Evaluates `program` with `variables` and the `authorizer` variable (the program must
    /// have been compiled with [`AUTHORIZER_VARIABLE`] among its variables), asking the chain
    /// each check the expression makes; [`EvalError::CostLimitExceeded`] when its checks cost
    /// more than the budget.
    pub async fn evaluate(
        &self,
        program: &Program,
        variables: &[(&str, &serde_json::Value)],
    ) -> Result<serde_json::Value, EvalError> {
        self.evaluate_values(program, variables, &[]).await
    }

    /// [`CelAuthorizer::evaluate`] with further variables that are CEL values already (an
    /// admission policy's `variables`, its objects converted once per request).
    pub async fn evaluate_values(
        &self,
        program: &Program,
        variables: &[(&str, &serde_json::Value)],
        values: &[(&str, Value)],
    ) -> Result<serde_json::Value, EvalError> {
        let checks = self.budget / CHECK_COST;
        let most_asked = checks.saturating_mul(checks.saturating_add(1));
        let mut answers: Vec<(Check, Decision)> = Vec::new();
        loop {
            let round = Arc::new(Round {
                answers: answers.clone(),
                pending: Mutex::new(Vec::new()),
                spent: AtomicU64::new(0),
                budget: self.budget,
                exceeded: AtomicBool::new(false),
            });
            let mut round_values: Vec<(&str, Value)> = self.values(&round);
            round_values.extend(values.iter().map(|(n, v)| (*n, v.clone())));
            let result = evaluate_with(program, variables, round_values);
            let pending = round.take_pending();
            if pending.is_empty() {
                return if round.exceeded.load(Ordering::Relaxed) {
                    Err(EvalError::CostLimitExceeded)
                } else {
                    result
                };
            }
            if (answers.len() + pending.len()) as u64 > most_asked {
                return Err(EvalError::CostLimitExceeded);
            }
            for check in pending {
                let request = check.request();
                let attributes = Attributes {
                    user: &check.user,
                    request: &request,
                };
                let decision = self.chain.decide(&attributes).await;
                answers.push((check, decision));
            }
        }
    }

    /// The variables of one round: `authorizer` (a map, so that `authorizer.requestResource`
    /// selects) and the hidden principal the map's functions act for.
    fn values(&self, round: &Arc<Round>) -> Vec<(&'static str, Value)> {
        let principal = Principal {
            user: self.user.clone(),
            round: RoundRef(round.clone()),
        };
        let mut fields = HashMap::new();
        if let Some(target) = &self.request_resource {
            let check = ResourceCheck {
                principal: principal.clone(),
                target: target.clone(),
            };
            fields.insert("requestResource".to_owned(), opaque(check));
        }
        vec![
            (AUTHORIZER_VARIABLE, Value::from(fields)),
            (HANDLE, opaque(principal)),
        ]
    }
}

/// One authorization question: may `user` do `verb` to `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Check {
    user: Arc<UserInfo>,
    target: Target,
    verb: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Path(String),
    Resource(ResourceTarget),
}

/// What a resource check names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ResourceTarget {
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
    field_selector: String,
    label_selector: String,
}

impl Check {
    /// The request the authorizers are asked about (any version of the resource).
    fn request(&self) -> RequestInfo {
        let target = match &self.target {
            Target::Path(path) => {
                return RequestInfo::non_resource(path, Verb::Other(self.verb.clone()));
            }
            Target::Resource(target) => target,
        };
        let mut info = RequestInfo::non_resource("", Verb::named(&self.verb));
        info.is_resource_request = true;
        info.api_prefix = if target.group.is_empty() {
            "api"
        } else {
            "apis"
        }
        .to_owned();
        info.api_group = target.group.clone();
        info.api_version = "*".to_owned();
        info.resource = target.resource.clone();
        info.subresource = target.subresource.clone();
        info.namespace = target.namespace.clone();
        info.name = target.name.clone();
        info.field_selector = target.field_selector.clone();
        info.label_selector = target.label_selector.clone();
        info
    }
}

/// One round of an evaluation: the answers known, the checks asked without one, the cost.
struct Round {
    answers: Vec<(Check, Decision)>,
    pending: Mutex<Vec<Check>>,
    spent: AtomicU64,
    budget: u64,
    exceeded: AtomicBool,
}

impl Round {
    /// The answer to `check`, charged; unanswered checks are recorded for the next round.
    fn check(&self, check: Check) -> ResolveResult {
        let spent = self.spent.fetch_add(CHECK_COST, Ordering::Relaxed) + CHECK_COST;
        if spent > self.budget {
            self.exceeded.store(true, Ordering::Relaxed);
            return Err(ExecutionError::function_error(
                "check",
                EvalError::CostLimitExceeded,
            ));
        }
        if let Some((_, decision)) = self.answers.iter().find(|(c, _)| *c == check) {
            return Ok(opaque(DecisionValue::from(decision)));
        }
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if !pending.contains(&check) {
            pending.push(check);
        }
        Err(ExecutionError::function_error("check", UNANSWERED))
    }

    fn take_pending(&self) -> Vec<Check> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A round as library values carry it; values compare by what they check, not by round.
#[derive(Clone)]
struct RoundRef(Arc<Round>);

impl PartialEq for RoundRef {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RoundRef {}

impl fmt::Debug for RoundRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Round")
    }
}

/// The `Authorizer` type: checks go to the chain about `user`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Principal {
    user: Arc<UserInfo>,
    round: RoundRef,
}

/// The `PathCheck` type.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PathCheck {
    principal: Principal,
    path: String,
}

/// The `GroupCheck` type.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GroupCheck {
    principal: Principal,
    group: String,
}

/// The `ResourceCheck` type.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ResourceCheck {
    principal: Principal,
    target: ResourceTarget,
}

/// The `Decision` type.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DecisionValue {
    allowed: bool,
    denied: bool,
    reason: String,
}

impl From<&Decision> for DecisionValue {
    fn from(decision: &Decision) -> Self {
        let (allowed, denied, reason) = match decision {
            Decision::Allow => (true, false, ""),
            Decision::Deny(reason) => (false, true, reason.as_str()),
            Decision::NoOpinion(reason) => (false, false, reason.as_str()),
        };
        Self {
            allowed,
            denied,
            reason: reason.to_owned(),
        }
    }
}

macro_rules! opaque_type {
    ($($ty:ty => $name:expr),* $(,)?) => {
        $(impl Opaque for $ty {
            fn runtime_type_name(&self) -> &str {
                $name
            }
        })*
    };
}

opaque_type!(
    Principal => AUTHORIZER_TYPE,
    PathCheck => PATH_CHECK_TYPE,
    GroupCheck => GROUP_CHECK_TYPE,
    ResourceCheck => RESOURCE_CHECK_TYPE,
    DecisionValue => DECISION_TYPE,
);

fn opaque<T: Opaque>(value: T) -> Value {
    Value::Opaque(Arc::new(value))
}

/// `this` as a library value of type `T` (named `want` in the error otherwise).
fn receiver<T: Opaque + Clone>(this: &Value, want: &str) -> Result<T, ExecutionError> {
    let found = match this {
        Value::Opaque(o) => o.downcast_ref::<T>().cloned(),
        _ => None,
    };
    found.ok_or_else(|| ExecutionError::UnexpectedType {
        got: type_name(this),
        want: want.to_owned(),
    })
}

fn type_name(value: &Value) -> String {
    match value {
        Value::Opaque(o) => o.runtime_type_name().to_owned(),
        other => format!("{:?}", other.type_of()),
    }
}

/// The principal `this` stands for: an `Authorizer` value, or the `authorizer` variable
/// itself (whose principal is the round's hidden one).
fn principal(ftx: &FunctionContext, this: &Value) -> Result<Principal, ExecutionError> {
    if !matches!(this, Value::Map(_)) {
        return receiver(this, AUTHORIZER_TYPE);
    }
    let handle = ftx
        .ptx
        .get_variable(HANDLE)
        .ok_or_else(|| ftx.error("no authorizer is available to this expression"))?;
    receiver(&Value::try_from(handle.as_ref())?, AUTHORIZER_TYPE)
}

/// Registers the library's functions in `context`.
pub(super) fn register(context: &mut cel::Context<'_>) {
    context.add_function("path", path);
    context.add_function("group", group);
    context.add_function("serviceAccount", service_account);
    context.add_function("resource", resource);
    context.add_function("subresource", subresource);
    context.add_function("namespace", namespace);
    context.add_function("name", name);
    context.add_function("fieldSelector", field_selector);
    context.add_function("labelSelector", label_selector);
    context.add_function("check", check);
    context.add_function("allowed", allowed);
    context.add_function("denied", denied);
    context.add_function("reason", reason);
    context.add_function("errored", errored);
    context.add_function("error", error);
}

/// `<Authorizer>.path(<string>) <PathCheck>`: a check of a non-resource path.
fn path(ftx: &FunctionContext, This(this): This<Value>, path: Arc<String>) -> ResolveResult {
    let principal = principal(ftx, &this)?;
    if path.trim().is_empty() {
        return Err(ftx.error("path must not be empty"));
    }
    Ok(opaque(PathCheck {
        principal,
        path: path.to_string(),
    }))
}

/// `<Authorizer>.group(<string>) <GroupCheck>`: checks in an API group (`''`: core).
fn group(ftx: &FunctionContext, This(this): This<Value>, group: Arc<String>) -> ResolveResult {
    Ok(opaque(GroupCheck {
        principal: principal(ftx, &this)?,
        group: group.to_string(),
    }))
}

/// `<Authorizer>.serviceAccount(<namespace>, <name>) <Authorizer>`: checks about a service
/// account instead of the principal.
fn service_account(
    ftx: &FunctionContext,
    This(this): This<Value>,
    namespace: Arc<String>,
    name: Arc<String>,
) -> ResolveResult {
    let principal = principal(ftx, &this)?;
    if !validate_dns_subdomain(&name).is_empty() {
        return Err(ftx.error("Invalid service account name"));
    }
    if !validate_dns_label(&namespace).is_empty() {
        return Err(ftx.error("Invalid service account namespace"));
    }
    let user = UserInfo {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        groups: vec![
            SERVICE_ACCOUNTS.to_owned(),
            format!("{SERVICE_ACCOUNTS}:{namespace}"),
        ],
        ..UserInfo::default()
    };
    Ok(opaque(Principal {
        user: Arc::new(user),
        round: principal.round,
    }))
}

/// `<GroupCheck>.resource(<string>) <ResourceCheck>`.
fn resource(
    ftx: &FunctionContext,
    This(this): This<Value>,
    resource: Arc<String>,
) -> ResolveResult {
    let group: GroupCheck = receiver(&this, GROUP_CHECK_TYPE)?;
    if resource.trim().is_empty() {
        return Err(ftx.error("resource must not be empty"));
    }
    Ok(opaque(ResourceCheck {
        principal: group.principal,
        target: ResourceTarget {
            group: group.group,
            resource: resource.to_string(),
            ..ResourceTarget::default()
        },
    }))
}

/// A resource check with one more attribute set by `set`.
fn refine(this: &Value, value: &str, set: fn(&mut ResourceTarget, String)) -> ResolveResult {
    let mut check: ResourceCheck = receiver(this, RESOURCE_CHECK_TYPE)?;
    set(&mut check.target, value.to_owned());
    Ok(opaque(check))
}

/// `<ResourceCheck>.subresource(<string>) <ResourceCheck>` (`''`: none).
fn subresource(This(this): This<Value>, value: Arc<String>) -> ResolveResult {
    refine(&this, &value, |t, v| t.subresource = v)
}

/// `<ResourceCheck>.namespace(<string>) <ResourceCheck>` (`''`: the cluster scope).
fn namespace(This(this): This<Value>, value: Arc<String>) -> ResolveResult {
    refine(&this, &value, |t, v| t.namespace = v)
}

/// `<ResourceCheck>.name(<string>) <ResourceCheck>` (`''`: any name).
fn name(This(this): This<Value>, value: Arc<String>) -> ResolveResult {
    refine(&this, &value, |t, v| t.name = v)
}

/// `<ResourceCheck>.fieldSelector(<string>) <ResourceCheck>`.
fn field_selector(This(this): This<Value>, value: Arc<String>) -> ResolveResult {
    refine(&this, &value, |t, v| t.field_selector = v)
}

/// `<ResourceCheck>.labelSelector(<string>) <ResourceCheck>`.
fn label_selector(This(this): This<Value>, value: Arc<String>) -> ResolveResult {
    refine(&this, &value, |t, v| t.label_selector = v)
}

/// `<PathCheck>.check(<http verb>) <Decision>` and `<ResourceCheck>.check(<verb>) <Decision>`.
fn check(This(this): This<Value>, verb: Arc<String>) -> ResolveResult {
    let (principal, target) = if let Ok(path) = receiver::<PathCheck>(&this, PATH_CHECK_TYPE) {
        (path.principal, Target::Path(path.path))
    } else {
        let resource: ResourceCheck = receiver(&this, "PathCheck or ResourceCheck")?;
        (resource.principal, Target::Resource(resource.target))
    };
    principal.round.0.check(Check {
        user: principal.user,
        target,
        verb: verb.to_string(),
    })
}

fn decision(this: &Value) -> Result<DecisionValue, ExecutionError> {
    receiver(this, DECISION_TYPE)
}

/// `<Decision>.allowed() <bool>`: whether the chain allowed.
fn allowed(This(this): This<Value>) -> ResolveResult {
    Ok(Value::Bool(decision(&this)?.allowed))
}

/// `<Decision>.denied() <bool>`: whether a mode denied outright.
fn denied(This(this): This<Value>) -> ResolveResult {
    Ok(Value::Bool(decision(&this)?.denied))
}

/// `<Decision>.reason() <string>`: the chain's reason.
fn reason(This(this): This<Value>) -> ResolveResult {
    Ok(Value::String(Arc::new(decision(&this)?.reason)))
}

/// `<Decision>.errored() <bool>`: false, as the chain answers failures as decisions.
fn errored(This(this): This<Value>) -> ResolveResult {
    decision(&this)?;
    Ok(Value::Bool(false))
}

/// `<Decision>.error() <string>`: empty, as the chain answers failures as decisions.
fn error(This(this): This<Value>) -> ResolveResult {
    decision(&this)?;
    Ok(Value::String(Arc::new(String::new())))
}

#[cfg(test)]
#[path = "authorizer_test.rs"]
mod tests;
