//! The flow-control configuration as the filter uses it: FlowSchemas parsed and sorted by
//! `matchingPrecedence` then name, PriorityLevelConfigurations by name, and the
//! classification of a request (user, groups, verb, resource, namespace, path) into a
//! schema, its level and a flow distinguisher.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::auth::UserInfo;
use crate::request::RequestInfo;

/// The prefix of a service account's user name.
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// How a schema tells flows apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distinguisher {
    /// One flow for every request of the schema.
    None,
    /// One flow per user name.
    ByUser,
    /// One flow per namespace (empty for cluster-scoped and non-resource requests).
    ByNamespace,
}

/// One FlowSchema.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The object's name.
    pub name: String,
    /// The object's uid.
    pub uid: String,
    /// The level it sends requests to.
    pub level: String,
    /// Lower matches first.
    pub precedence: i64,
    /// How flows are told apart.
    pub distinguisher: Distinguisher,
    rules: Vec<Value>,
}

/// What a limited level does when its queues are full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queuing {
    /// How many queues.
    pub queues: usize,
    /// How many queues a flow is dealt.
    pub hand_size: usize,
    /// The most requests one queue holds.
    pub queue_length_limit: usize,
}

/// One PriorityLevelConfiguration.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// The object's name.
    pub name: String,
    /// The object's uid.
    pub uid: String,
    /// Exempt levels have no limit.
    pub exempt: bool,
    /// Its share of the server's concurrency.
    pub nominal_shares: u64,
    /// The percent of its nominal seats others may borrow.
    pub lendable_percent: u64,
    /// The most it may borrow, in percent of its nominal seats (`None`: no limit).
    pub borrowing_limit_percent: Option<u64>,
    /// Queuing, or `None` when a request that finds no seat is rejected.
    pub queuing: Option<Queuing>,
}

/// The whole configuration.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Schemas in matching order.
    pub schemas: Vec<Schema>,
    /// Levels by name.
    pub levels: BTreeMap<String, Level>,
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// The schema's name.
    pub schema: String,
    /// The schema's uid.
    pub schema_uid: String,
    /// The level's name.
    pub level: String,
    /// The level's uid.
    pub level_uid: String,
    /// The flow within the level.
    pub flow: String,
}

fn int(v: &Value, pointer: &str) -> Option<i64> {
    v.pointer(pointer).and_then(Value::as_i64)
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Schema {
    /// A FlowSchema object (defaulted as stored).
    pub fn from_object(obj: &Value) -> Self {
        let distinguisher = match text(obj, "/spec/distinguisherMethod/type") {
            "ByUser" => Distinguisher::ByUser,
            "ByNamespace" => Distinguisher::ByNamespace,
            _ => Distinguisher::None,
        };
        Self {
            name: text(obj, "/metadata/name").to_owned(),
            uid: text(obj, "/metadata/uid").to_owned(),
            level: text(obj, "/spec/priorityLevelConfiguration/name").to_owned(),
            precedence: int(obj, "/spec/matchingPrecedence").unwrap_or(1000),
            distinguisher,
            rules: obj
                .pointer("/spec/rules")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// Whether a rule of the schema matches the request.
    pub fn matches(&self, user: &UserInfo, info: &RequestInfo) -> bool {
        self.rules.iter().any(|rule| {
            let subjects = rule.get("subjects").and_then(Value::as_array);
            subjects
                .into_iter()
                .flatten()
                .any(|s| subject_matches(s, user))
                && if info.is_resource_request {
                    list(rule, "resourceRules").any(|r| resource_rule_matches(r, info))
                } else {
                    list(rule, "nonResourceRules").any(|r| non_resource_rule_matches(r, info))
                }
        })
    }
}

fn list<'a>(v: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    v.get(field).and_then(Value::as_array).into_iter().flatten()
}

fn strings<'a>(v: &'a Value, field: &str) -> impl Iterator<Item = &'a str> {
    list(v, field).filter_map(Value::as_str)
}

fn has(v: &Value, field: &str, wanted: &str) -> bool {
    strings(v, field).any(|s| s == "*" || s == wanted)
}

fn subject_matches(subject: &Value, user: &UserInfo) -> bool {
    match text(subject, "/kind") {
        "User" => {
            let name = text(subject, "/user/name");
            name == "*" || name == user.name
        }
        "Group" => {
            let name = text(subject, "/group/name");
            name == "*" || user.in_group(name)
        }
        "ServiceAccount" => {
            let Some(rest) = user.name.strip_prefix(SERVICE_ACCOUNT_PREFIX) else {
                return false;
            };
            let Some((namespace, name)) = rest.split_once(':') else {
                return false;
            };
            let wanted = text(subject, "/serviceAccount/name");
            text(subject, "/serviceAccount/namespace") == namespace
                && (wanted == "*" || wanted == name)
        }
        _ => false,
    }
}

fn resource_rule_matches(rule: &Value, info: &RequestInfo) -> bool {
    let resource = if info.subresource.is_empty() {
        info.resource.clone()
    } else {
        format!("{}/{}", info.resource, info.subresource)
    };
    let scope_matches = if info.namespace.is_empty() {
        rule.get("clusterScope").and_then(Value::as_bool) == Some(true)
    } else {
        has(rule, "namespaces", &info.namespace)
    };
    has(rule, "verbs", info.verb.as_str())
        && has(rule, "apiGroups", &info.api_group)
        && has(rule, "resources", &resource)
        && scope_matches
}

fn non_resource_rule_matches(rule: &Value, info: &RequestInfo) -> bool {
    has(rule, "verbs", info.verb.as_str())
        && strings(rule, "nonResourceURLs").any(|pattern| url_matches(pattern, &info.path))
}

/// `*` matches everything, `/prefix/*` everything under the prefix, anything else the path
/// exactly.
fn url_matches(pattern: &str, path: &str) -> bool {
    pattern == "*"
        || pattern == path
        || pattern
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

impl Level {
    /// A PriorityLevelConfiguration object (defaulted as stored).
    pub fn from_object(obj: &Value) -> Self {
        let exempt = text(obj, "/spec/type") == "Exempt";
        let part = if exempt { "exempt" } else { "limited" };
        let field = |name: &str| int(obj, &format!("/spec/{part}/{name}"));
        let non_negative = |v: Option<i64>| v.map(|v| v.max(0) as u64);
        let queuing =
            (!exempt && text(obj, "/spec/limited/limitResponse/type") == "Queue").then(|| {
                let q = |name: &str, default: i64| {
                    int(obj, &format!("/spec/limited/limitResponse/queuing/{name}"))
                        .filter(|v| *v > 0)
                        .unwrap_or(default) as usize
                };
                Queuing {
                    queues: q("queues", 64),
                    hand_size: q("handSize", 8),
                    queue_length_limit: q("queueLengthLimit", 50),
                }
            });
        Self {
            name: text(obj, "/metadata/name").to_owned(),
            uid: text(obj, "/metadata/uid").to_owned(),
            exempt,
            nominal_shares: non_negative(field("nominalConcurrencyShares")).unwrap_or(if exempt {
                0
            } else {
                30
            }),
            lendable_percent: non_negative(field("lendablePercent")).unwrap_or(0).min(100),
            borrowing_limit_percent: non_negative(field("borrowingLimitPercent")),
            queuing,
        }
    }
}

impl Config {
    /// The configuration of these FlowSchema and PriorityLevelConfiguration objects. A
    /// mandatory object (`exempt`, `catch-all`) missing from them is taken from `mandatory`,
    /// as Kubernetes does before its bootstrap has written them.
    pub fn new(schemas: &[Value], levels: &[Value], mandatory: &Config) -> Self {
        let mut config = Config {
            schemas: schemas.iter().map(Schema::from_object).collect(),
            levels: levels
                .iter()
                .map(Level::from_object)
                .map(|l| (l.name.clone(), l))
                .collect(),
        };
        for schema in &mandatory.schemas {
            if !config.schemas.iter().any(|s| s.name == schema.name) {
                config.schemas.push(schema.clone());
            }
        }
        for (name, level) in &mandatory.levels {
            config
                .levels
                .entry(name.clone())
                .or_insert_with(|| level.clone());
        }
        config
            .schemas
            .retain(|s| config.levels.contains_key(&s.level));
        config
            .schemas
            .sort_by(|a, b| (a.precedence, &a.name).cmp(&(b.precedence, &b.name)));
        config
    }

    /// The first schema (by precedence, then name) matching the request, with its level and
    /// flow; `None` when nothing matches (impossible with the mandatory `catch-all`).
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<Classification> {
        let schema = self.schemas.iter().find(|s| s.matches(user, info))?;
        let level = self.levels.get(&schema.level)?;
        let flow = match schema.distinguisher {
            Distinguisher::None => String::new(),
            Distinguisher::ByUser => user.name.clone(),
            Distinguisher::ByNamespace => info.namespace.clone(),
        };
        Some(Classification {
            schema: schema.name.clone(),
            schema_uid: schema.uid.clone(),
            level: level.name.clone(),
            level_uid: level.uid.clone(),
            flow,
        })
    }
}

#[cfg(test)]
mod tests {
    use http::Method;
    use serde_json::json;

    use super::*;
    use crate::flavor::Flavor;
    use crate::flowcontrol::objects;
    use crate::request::QueryParams;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    fn request(method: Method, path: &str) -> RequestInfo {
        RequestInfo::parse(&method, path, &QueryParams::parse(None))
    }

    fn bootstrap() -> Config {
        let flavor = Flavor::Kubernetes;
        let (schemas, levels) = objects::all(flavor);
        Config::new(&schemas, &levels, &objects::mandatory_config(flavor))
    }

    fn classified(config: &Config, user: &UserInfo, info: &RequestInfo) -> (String, String) {
        let c = config.classify(user, info).expect("catch-all matches");
        (c.schema, c.flow)
    }

    // R-RES-239
    #[test]
    fn bootstrap_schemas_classify_by_subject_and_target() {
        let config = bootstrap();
        let authenticated = "system:authenticated";
        let masters = user("admin", &["system:masters", authenticated]);
        let pods = request(Method::GET, "/api/v1/namespaces/ns1/pods");
        assert_eq!(classified(&config, &masters, &pods).0, "exempt");
        let alice = user("alice", &[authenticated]);
        assert_eq!(
            classified(&config, &alice, &pods),
            ("global-default".into(), "alice".into())
        );
        let probe = request(Method::GET, "/readyz");
        assert_eq!(classified(&config, &alice, &probe).0, "probes");
        let node = user("system:node:n1", &["system:nodes", authenticated]);
        let lease = request(
            Method::PUT,
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
        );
        assert_eq!(classified(&config, &node, &lease).0, "system-node-high");
        assert_eq!(classified(&config, &node, &pods).0, "system-nodes");
        let sa = user(
            "system:serviceaccount:kube-system:job-controller",
            &["system:serviceaccounts", authenticated],
        );
        assert_eq!(
            classified(&config, &sa, &pods),
            ("kube-system-service-accounts".into(), "ns1".into())
        );
        let other_sa = user(
            "system:serviceaccount:ns1:default",
            &["system:serviceaccounts", authenticated],
        );
        assert_eq!(classified(&config, &other_sa, &pods).0, "service-accounts");
        let controller = user("system:kube-controller-manager", &[authenticated]);
        let nodes = request(Method::GET, "/api/v1/nodes");
        assert_eq!(
            classified(&config, &controller, &nodes),
            ("kube-controller-manager".into(), String::new())
        );
    }

    #[test]
    fn resource_rules_need_scope_group_and_subresource() {
        let schema = Schema::from_object(&json!({
            "metadata": {"name": "mine", "uid": "u1"},
            "spec": {"priorityLevelConfiguration": {"name": "l"}, "matchingPrecedence": 5,
                "distinguisherMethod": {"type": "ByNamespace"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "bob"}}],
                    "resourceRules": [{"verbs": ["get", "list"], "apiGroups": [""],
                        "resources": ["pods/status", "configmaps"], "namespaces": ["a"]}],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}]}]}
        }));
        let bob = user("bob", &[]);
        assert!(schema.matches(
            &bob,
            &request(Method::GET, "/api/v1/namespaces/a/configmaps")
        ));
        assert!(schema.matches(
            &bob,
            &request(Method::GET, "/api/v1/namespaces/a/pods/p/status")
        ));
        assert!(!schema.matches(&bob, &request(Method::GET, "/api/v1/namespaces/a/pods/p")));
        assert!(!schema.matches(
            &bob,
            &request(Method::GET, "/api/v1/namespaces/b/configmaps")
        ));
        assert!(!schema.matches(&bob, &request(Method::GET, "/api/v1/configmaps")));
        assert!(!schema.matches(
            &bob,
            &request(Method::POST, "/api/v1/namespaces/a/configmaps")
        ));
        assert!(schema.matches(&bob, &request(Method::GET, "/apis/apps")));
        assert!(!schema.matches(&bob, &request(Method::GET, "/apis")));
        assert!(!schema.matches(&user("eve", &[]), &request(Method::GET, "/apis/apps")));
    }

    #[test]
    fn precedence_then_name_and_dangling_schemas_are_skipped() {
        let fs = |name: &str, precedence: i64, level: &str| {
            json!({"metadata": {"name": name}, "spec": {
                "priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence,
                "rules": [{"subjects": [{"kind": "Group", "group": {"name": "*"}}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}})
        };
        let mandatory = objects::mandatory_config(Flavor::Kubernetes);
        let schemas = [
            fs("b", 3, "catch-all"),
            fs("a", 3, "catch-all"),
            fs("c", 2, "gone"),
        ];
        let config = Config::new(&schemas, &[], &mandatory);
        let path = request(Method::GET, "/version");
        assert_eq!(classified(&config, &user("x", &[]), &path).0, "a");
    }

    #[test]
    fn levels_read_defaults_and_borrowing() {
        let level = Level::from_object(&json!({"metadata": {"name": "l"}, "spec": {
            "type": "Limited", "limited": {"nominalConcurrencyShares": 0,
                "borrowingLimitPercent": 50, "limitResponse": {"type": "Reject"}}}}));
        assert_eq!(level.nominal_shares, 0);
        assert_eq!(level.borrowing_limit_percent, Some(50));
        assert_eq!(level.queuing, None);
    }
}
