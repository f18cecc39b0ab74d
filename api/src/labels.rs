//! Label requirements and selectors as Kubernetes' `labels` package models them: a set of
//! requirements that must all hold, matched against an object's label map. Query selectors
//! (`labelSelector=`, parsed in `request`) and the `metav1.LabelSelector` of object fields
//! (in `validation::label_selector`) both become a [`LabelSelector`].

use std::collections::BTreeSet;

use serde_json::Map;
use serde_json::Value;

/// One label requirement: a key and what its value must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelRequirement {
    /// The key is present.
    Exists(String),
    /// The key is absent.
    NotExists(String),
    /// The key is present with one of the values.
    In(String, BTreeSet<String>),
    /// The key is absent, or present with none of the values.
    NotIn(String, BTreeSet<String>),
}

/// A parsed label selector (empty: matches everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<LabelRequirement>,
}

impl LabelSelector {
    /// The selector of already-checked `requirements` (all must hold).
    pub fn from_requirements(requirements: Vec<LabelRequirement>) -> Self {
        Self { requirements }
    }

    /// Whether `obj`'s `metadata.labels` satisfy every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        let empty = Map::new();
        let labels = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        self.matches_labels(labels)
    }

    /// Whether the label map `labels` satisfies every requirement.
    pub fn matches_labels(&self, labels: &Map<String, Value>) -> bool {
        let label = |k: &str| labels.get(k).and_then(Value::as_str);
        self.requirements.iter().all(|r| match r {
            LabelRequirement::Exists(k) => label(k).is_some(),
            LabelRequirement::NotExists(k) => label(k).is_none(),
            LabelRequirement::In(k, vs) => label(k).is_some_and(|v| vs.contains(v)),
            LabelRequirement::NotIn(k, vs) => label(k).is_none_or(|v| !vs.contains(v)),
        })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements, in the order written (all must hold).
    pub fn requirements(&self) -> &[LabelRequirement] {
        &self.requirements
    }
}
