//! `DefaultIngressClass`: a new Ingress that names no class (neither `ingressClassName` nor
//! the class annotation) gets the default IngressClass's name (Kubernetes' plugin of that
//! name).

use std::sync::Arc;

use serde_json::Value;

use super::default_class::DefaultClass;
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
    default: DefaultClass,
    group: String,
}

impl DefaultIngressClass {
    /// The plugin reading `storage`'s IngressClasses.
    pub fn new(storage: Arc<dyn Storage>, flavor: Flavor) -> Self {
        let (group, domain) = (
            format!("networking.{}", flavor.group_domain()),
            flavor.label_domain(),
        );
        let default = DefaultClass {
            classes: ObjectCache::new(storage, &group, "ingressclasses"),
            marks: vec![format!("ingressclass.{domain}/is-default-class")],
            field: "ingressClassName",
            annotation: format!("{domain}/ingress.class"),
        };
        Self { default, group }
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
        self.default.fill(attributes, ingress).await
    }
}
