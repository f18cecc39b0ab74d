//! `DefaultIngressClass`: a new Ingress that names no class (neither `ingressClassName` nor
//! the class annotation) gets the default IngressClass's name (Kubernetes' plugin of that
//! name).

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::default_class::newest_default;
use super::objects::ObjectCache;
use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// Sets the default class of new Ingresses.
pub struct DefaultIngressClass {
    classes: ObjectCache,
    group: String,
    /// The default-class annotation.
    default_mark: [String; 1],
    /// The annotation that names an Ingress's class.
    class_annotation: String,
}

impl DefaultIngressClass {
    /// The plugin reading `storage`'s IngressClasses.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        let (group, domain) = (
            format!("networking.{}", flavor.group_domain()),
            flavor.label_domain(),
        );
        Self {
            classes: ObjectCache::new(storage, &group, "ingressclasses"),
            group,
            default_mark: [format!("ingressclass.{domain}/is-default-class")],
            class_annotation: format!("{domain}/ingress.class"),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for DefaultIngressClass {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(ingress) = object else {
            return Ok(());
        };
        if attributes.operation != Operation::Create
            || attributes.resource.group != self.group
            || attributes.resource.plural != "ingresses"
            || !attributes.subresource.is_empty()
        {
            return Ok(());
        }
        let named = ingress
            .pointer("/spec/ingressClassName")
            .is_some_and(|c| !c.is_null())
            || (ingress.pointer("/metadata/annotations"))
                .and_then(|a| a.get(&self.class_annotation))
                .is_some();
        if named {
            return Ok(());
        }
        let classes = (self.classes.list().await).map_err(|e| attributes.forbidden(e))?;
        let Some(default) = newest_default(classes, &self.default_mark) else {
            return Ok(());
        };
        let name = default
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(json!(""));
        let Some(ingress) = ingress.as_object_mut() else {
            return Ok(());
        };
        let spec = ingress.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            spec.insert("ingressClassName".into(), name);
        }
        Ok(())
    }
}
