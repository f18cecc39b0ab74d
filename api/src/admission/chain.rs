//! The enabled admission plugins, in order: the mutating pass, its reinvocation, the
//! validating pass.

use std::sync::Arc;

use serde_json::Value;

use super::Attributes;
use super::Notes;
use super::Plugin;
use crate::error::ApiError;

/// The admission chain of a server: every store runs it on every write a request makes.
#[derive(Clone, Default)]
pub struct Admission {
    plugins: Vec<(&'static str, Arc<dyn Plugin>)>,
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.plugins.iter().map(|(name, _)| name))
            .finish()
    }
}

impl Admission {
    /// The chain of `plugins`, run in the order given (a [`super::PluginSelection`]'s).
    pub fn new(plugins: Vec<(&'static str, Arc<dyn Plugin>)>) -> Self {
        Self { plugins }
    }

    /// The plugins' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.plugins.iter().map(|(name, _)| *name)
    }

    /// Whether the plugin `name` runs.
    pub fn runs(&self, name: &str) -> bool {
        self.plugins.iter().any(|(n, _)| *n == name)
    }

    /// Whether no plugin runs.
    pub fn is_empty(&self) -> bool {
        self.plugins.is_empty()
    }

    /// The mutating pass: every plugin's `admit`, in order, the first refusal ending it. When
    /// a plugin asks for it ([`Notes::reinvoke`]), the whole pass runs once more, as
    /// Kubernetes' reinvocation does (plugins must be idempotent).
    pub async fn mutate(
        &self,
        attributes: &Attributes<'_>,
        mut object: Option<&mut Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        for pass in 0..2 {
            notes.reinvoking = pass == 1;
            notes.reinvoke = false;
            for (_, plugin) in &self.plugins {
                plugin
                    .admit(attributes, object.as_deref_mut(), old, notes)
                    .await?;
            }
            if !notes.reinvoke {
                break;
            }
        }
        notes.reinvoke = false;
        notes.reinvoking = false;
        Ok(())
    }

    /// The validating pass: every plugin's `validate`, in order, the first refusal ending it.
    pub async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        for (_, plugin) in &self.plugins {
            plugin.validate(attributes, object, old, notes).await?;
        }
        Ok(())
    }
}
