//! The configured authorization modes as one [`Authorizer`] ([`ModeChain`]), consulted in
//! order (R-ACC-163), and replaced whole when the configuration file is reloaded: a request
//! takes the chain in force once (a clone of an `Arc` under a read lock held for no await) and
//! runs its modes without any lock. The [`Builder`] makes the RBAC, Node and ABAC authorizers
//! once (they follow the store) and hands the same ones to every chain it builds; a chain
//! that adds or removes one of them is refused (R-ACC-165).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::RwLock;

use apiary_api::Flavor;
use apiary_api::auth::AbacAuthorizer;
use apiary_api::auth::AlwaysAllowAuthorizer;
use apiary_api::auth::AlwaysDenyAuthorizer;
use apiary_api::auth::Attributes;
use apiary_api::auth::Authorizer;
use apiary_api::auth::Decision;
use apiary_api::auth::Rules;
use apiary_api::auth::UserInfo;
use apiary_api::auth::node::NodeAuthorizer;
use apiary_api::auth::rbac::RbacAuthorizer;
use apiary_api::storage::Storage;

use super::AuthzError;
use super::Mode;
use super::ModeType;
use super::metrics::AuthzMetrics;
use super::webhook::WebhookAuthorizer;

/// One mode of a chain: its type and name (the metrics' labels) and the authorizer.
struct Entry {
    kind: &'static str,
    name: String,
    authorizer: Arc<dyn Authorizer>,
}

/// The modes in force, replaceable as a whole.
pub struct ModeChain {
    current: RwLock<Arc<Vec<Entry>>>,
    metrics: AuthzMetrics,
}

impl ModeChain {
    fn entries(&self) -> Arc<Vec<Entry>> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn replace(&self, entries: Vec<Entry>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(entries);
    }

    /// The names of the modes in force, in order.
    pub fn names(&self) -> Vec<String> {
        self.entries().iter().map(|e| e.name.clone()).collect()
    }
}

#[async_trait::async_trait]
impl Authorizer for ModeChain {
    /// The first allow or deny of the modes in force, else no opinion with their reasons.
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let entries = self.entries();
        let mut reasons = Vec::new();
        for entry in entries.iter() {
            match entry.authorizer.authorize(attributes).await {
                Decision::Allow => {
                    self.metrics.decisions.record(entry.kind, &entry.name, true);
                    return Decision::Allow;
                }
                Decision::Deny(reason) => {
                    self.metrics
                        .decisions
                        .record(entry.kind, &entry.name, false);
                    reasons.push(reason);
                    reasons.retain(|r| !r.is_empty());
                    return Decision::Deny(reasons.join("\n"));
                }
                Decision::NoOpinion(reason) => reasons.push(reason),
            }
        }
        reasons.retain(|r| !r.is_empty());
        Decision::NoOpinion(reasons.join("\n"))
    }

    /// The rules of every mode in force, merged; incomplete when one cannot list its own.
    async fn rules(&self, user: &UserInfo, namespace: &str) -> Option<Rules> {
        let entries = self.entries();
        let mut all = Rules::default();
        for entry in entries.iter() {
            match entry.authorizer.rules(user, namespace).await {
                Some(rules) => {
                    all.resource.extend(rules.resource);
                    all.non_resource.extend(rules.non_resource);
                    all.incomplete |= rules.incomplete;
                }
                None => all.incomplete = true,
            }
        }
        Some(all)
    }
}

/// What a chain's modes are built from.
pub struct BuildParts {
    /// The naming flavor.
    pub flavor: Flavor,
    /// The store RBAC and Node follow.
    pub storage: Arc<dyn Storage>,
    /// Whether the Node authorizer limits node agents by selectors.
    pub with_selectors: bool,
    /// The ABAC policy file (`--authorization-policy-file`).
    pub policy_file: Option<PathBuf>,
    /// The authorization metrics.
    pub metrics: AuthzMetrics,
}

/// Builds chains of modes around the RBAC, Node and ABAC authorizers made at start-up.
pub struct Builder {
    flavor: Flavor,
    fixed: BTreeMap<ModeType, Arc<dyn Authorizer>>,
    metrics: AuthzMetrics,
}

impl Builder {
    /// Makes the RBAC, Node and ABAC authorizers `modes` name (ABAC reads the policy file).
    pub fn new(parts: BuildParts, modes: &[Mode]) -> Result<Self, AuthzError> {
        let mut fixed: BTreeMap<ModeType, Arc<dyn Authorizer>> = BTreeMap::new();
        for mode in modes {
            let authorizer: Arc<dyn Authorizer> = match mode {
                Mode::Fixed(ModeType::Rbac) => {
                    RbacAuthorizer::new(parts.flavor, parts.storage.clone())
                }
                Mode::Fixed(ModeType::Node) => {
                    NodeAuthorizer::new(parts.flavor, parts.storage.clone(), parts.with_selectors)
                }
                Mode::Fixed(ModeType::Abac) => {
                    let path = parts.policy_file.clone().ok_or_else(|| {
                        AuthzError::Flags(vec![
                            "authorization-mode ABAC's authorization policy file not passed"
                                .to_owned(),
                        ])
                    })?;
                    let policy_error = |problem: String| AuthzError::Policy {
                        path: path.clone(),
                        problem,
                    };
                    let text =
                        std::fs::read_to_string(&path).map_err(|e| policy_error(e.to_string()))?;
                    AbacAuthorizer::parse(&text, parts.flavor)
                        .map_err(|e| policy_error(e.to_string()))?
                }
                _ => continue,
            };
            if let Mode::Fixed(kind) = mode {
                fixed.insert(*kind, authorizer);
            }
        }
        Ok(Self {
            flavor: parts.flavor,
            fixed,
            metrics: parts.metrics,
        })
    }

    /// A chain of `modes`.
    pub fn start(&self, modes: &[Mode]) -> Result<Arc<ModeChain>, String> {
        Ok(Arc::new(ModeChain {
            current: RwLock::new(Arc::new(self.entries(modes)?)),
            metrics: self.metrics.clone(),
        }))
    }

    /// Puts `modes` in force in `chain`, unless they add or remove an RBAC, Node or ABAC
    /// mode, or a webhook cannot be built; then the chain stays as it is.
    pub fn reload(&self, chain: &ModeChain, modes: &[Mode]) -> Result<(), String> {
        chain.replace(self.entries(modes)?);
        Ok(())
    }

    fn entries(&self, modes: &[Mode]) -> Result<Vec<Entry>, String> {
        let mut seen = BTreeSet::new();
        let mut entries = Vec::new();
        for mode in modes {
            let entry = match mode {
                Mode::Fixed(kind) => {
                    seen.insert(*kind);
                    let authorizer: Arc<dyn Authorizer> = match kind {
                        ModeType::AlwaysAllow => Arc::new(AlwaysAllowAuthorizer),
                        ModeType::AlwaysDeny => Arc::new(AlwaysDenyAuthorizer),
                        _ => self.fixed.get(kind).cloned().ok_or_else(|| {
                            format!(
                                "authorizer type {} is not allowed if it was not enabled at initial server startup",
                                kind.as_str()
                            )
                        })?,
                    };
                    Entry {
                        kind: kind.as_str(),
                        name: kind.as_str().to_ascii_lowercase(),
                        authorizer,
                    }
                }
                Mode::Webhook(webhook) => Entry {
                    kind: ModeType::Webhook.as_str(),
                    name: webhook.name.clone(),
                    authorizer: Arc::new(
                        WebhookAuthorizer::from_mode(
                            webhook,
                            self.flavor,
                            self.metrics.webhooks.clone(),
                        )
                        .map_err(|e| format!("webhook {:?}: {e}", webhook.name))?,
                    ),
                },
            };
            entries.push(entry);
        }
        let missing: Vec<&str> = self
            .fixed
            .keys()
            .filter(|k| !seen.contains(k))
            .map(|k| k.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!("missing required types: [{}]", missing.join(" ")));
        }
        Ok(entries)
    }
}
