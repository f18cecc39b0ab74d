//! Server-side apply through the store (R-RES-111..113, R-RES-200..214): the applied
//! configuration is decoded as a body (YAML, JSON being YAML; unknown fields judged as
//! `fieldValidation` asks), merged into the live object by the field manager
//! (`patch::apply`), and the result takes the normal update path. An absent object is
//! created from the configuration, which needs the `create` permission besides the `patch`
//! the router checked (Kubernetes' create-on-update authorization).
//!
//! A `resourceVersion` in the configuration is a precondition (409 when stale); without one,
//! a write that lost a race (or a create that found the object made meanwhile) reads the
//! object again and applies again, so no concurrent change is lost.

use serde_json::Value;

use super::RETRY_ATTEMPTS;
use super::Store;
use super::WriteOptions;
use super::Written;
use super::metadata::meta_mut;
use super::metadata::meta_str;
use super::persistence::Persistence;
use crate::auth::Attributes;
use crate::auth::Requester;
use crate::error::ApiError;
use crate::error::OPTIMISTIC_LOCK_MESSAGE;
use crate::error::excerpt;
use crate::patch::apply::Manager;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::schema::FieldValidation;
use crate::schema::Format;
use crate::storage::Revision;
use crate::storage::Storage;

/// What an apply wrote: the object, its warnings, and whether it created the object (201).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The answer, as any write's.
    pub written: Written,
    /// Whether the object was absent and the apply created it.
    pub created: bool,
}

/// Ok when the requester of `request` (an apply, authorized as `patch`) may also `create`
/// its object (R-RES-214); 403 worded for the verb `create` otherwise. Writes outside any
/// request act with the server's own authority.
async fn authorize_create(request: &RequestInfo) -> Result<(), ApiError> {
    let Some(requester) = Requester::current() else {
        return Ok(());
    };
    let create = RequestInfo {
        verb: Verb::Create,
        ..request.clone()
    };
    let attributes = Attributes {
        user: &requester.user,
        request: &create,
    };
    requester.authz.authorize(&attributes).await
}

impl Store {
    /// Applies the configuration `body` to the object `target` = (namespace, name,
    /// subresource) for `write`'s manager, with `write.force` (R-RES-204, R-RES-206):
    /// creates the object when it is absent (not through a subresource: 404 there), else
    /// merges it in. 400 when the body sets `metadata.managedFields` (R-RES-202) or names
    /// another object; 409 with the conflicting fields unless forced. A dry run answers the
    /// object it would store (R-RES-193). `request` is the request as the router authorized
    /// it, asked again as `create` before a create.
    pub async fn apply(
        &self,
        storage: &dyn Storage,
        target: (&str, &str, &str),
        body: &[u8],
        write: WriteOptions,
        request: &RequestInfo,
    ) -> Result<Applied, ApiError> {
        let (namespace, name, subresource) = target;
        let Some(manager) = write.manager.clone() else {
            return Err(ApiError::Internal("an apply has no field manager".into()));
        };
        let yaml = WriteOptions {
            format: Format::Yaml,
            ..write.clone()
        };
        let (config, warnings) = self.decode_config(body, &yaml)?;
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::BadRequest(
                "metadata.managedFields must be nil".into(),
            ));
        }
        let config = self.named_config(config, name)?;
        let requested: Option<Revision> = match meta_str(&config, "resourceVersion") {
            "" => None,
            rv => Some(rv.parse().map_err(|_| {
                ApiError::BadRequest(format!("invalid resourceVersion {:?}", excerpt(rv)))
            })?),
        };
        let api_version = self.resource.api_version();
        let identity = Manager {
            name: &manager.name,
            api_version: &api_version,
            subresource,
        };
        // The merged object carries the Apply entry: the update path records no other.
        let quiet = WriteOptions {
            manager: None,
            ..write.clone()
        };
        let key = self.resource.object_key(namespace, name);
        let mut writes = Persistence::optimistic(storage, write.dry_run);
        loop {
            let answer = async {
                let mut attempt = 0;
                loop {
                    attempt += 1;
                    let current = match self.read_current(&writes, &key, name).await {
                        Ok(current) => Some(current),
                        Err(ApiError::NotFound { .. }) if subresource.is_empty() => None,
                        Err(e) => return Err(e),
                    };
                    let Some((current, _, stored)) = current else {
                        authorize_create(request).await?;
                        let obj = self.with_field_manager(manager.now, |fm| {
                            fm.apply(None, &config, identity, write.force)
                        })?;
                        let created = match &self.shared {
                            Some(shared) => {
                                self.create_shared(
                                    shared,
                                    storage,
                                    namespace,
                                    obj,
                                    manager.now,
                                    &quiet,
                                )
                                .await
                            }
                            None => {
                                self.create_decoded(
                                    storage,
                                    &writes,
                                    namespace,
                                    obj,
                                    manager.now,
                                    &quiet,
                                )
                                .await
                            }
                        };
                        match created {
                            Ok(written) => return Ok((written, true)),
                            Err(ApiError::AlreadyExists { .. }) if attempt < RETRY_ATTEMPTS => {
                                continue;
                            }
                            Err(e) => return Err(e),
                        }
                    };
                    if requested.is_some_and(|rv| rv != current.mod_revision) {
                        return Err(self.conflict(name, OPTIMISTIC_LOCK_MESSAGE));
                    }
                    let live = match &self.shared {
                        Some(shared) => shared.read.served(stored).await?,
                        None => stored,
                    };
                    let mut merged = self.with_field_manager(manager.now, |fm| {
                        fm.apply(Some(&live), &config, identity, write.force)
                    })?;
                    meta_mut(&mut merged)?.insert(
                        "resourceVersion".to_owned(),
                        current.mod_revision.to_string().into(),
                    );
                    let (decoded, _) = self.decode_patched(&merged, FieldValidation::Ignore)?;
                    // The scale subresource changes the parent as its main update does.
                    let target = match subresource {
                        "scale" => (namespace, name, ""),
                        _ => target,
                    };
                    let updated = match &self.shared {
                        Some(shared) => {
                            self.update_shared(shared, storage, &writes, target, &decoded, &quiet)
                                .await
                        }
                        None => {
                            self.update_decoded(storage, &writes, target, &decoded, &quiet)
                                .await
                        }
                    };
                    match updated {
                        Ok(written) => return Ok((written, false)),
                        Err(ApiError::Conflict { .. })
                            if requested.is_none() && attempt < RETRY_ATTEMPTS =>
                        {
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
            .await;
            match writes.again() {
                Some(quorum) => writes = quorum,
                None => {
                    let (done, created) = answer?;
                    let mut warnings = warnings;
                    warnings.extend(done.warnings);
                    let body = done.body;
                    let written = Written { body, warnings };
                    return Ok(Applied { written, created });
                }
            }
        }
    }

    /// `config` named `name`, the name on the URL: set when the configuration leaves it
    /// out, 400 when it names another object (as an update's body).
    fn named_config(&self, mut config: Value, name: &str) -> Result<Value, ApiError> {
        match meta_str(&config, "name") {
            "" => {
                meta_mut(&mut config)?.insert("name".to_owned(), name.into());
                Ok(config)
            }
            body_name if body_name == name => Ok(config),
            body_name => Err(ApiError::BadRequest(format!(
                "the name of the object ({}) does not match the name on the URL ({})",
                excerpt(body_name),
                excerpt(name)
            ))),
        }
    }
}
