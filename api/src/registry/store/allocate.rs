//! The store's allocation seam for Services: cluster IPs and node ports are reserved after
//! validation and before the write, freed again when the write fails, and freed when the
//! Service is removed (Kubernetes' service storage `beginCreate`/`beginUpdate`/`afterDelete`).
//! A store without an allocator (every other kind) does nothing here.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::Store;
use super::metadata::meta_str;
use super::persistence::Persistence;
use crate::error::ApiError;
use crate::registry::StoredJson;
use crate::registry::allocator::AllocError;
use crate::registry::allocator::Allocated;
use crate::registry::allocator::ServiceAllocator;
use crate::registry::allocator::held_ips;
use crate::registry::allocator::held_ports;
use crate::storage::Storage;
use crate::storage::StoredObject;
use crate::validation::FieldError;

impl Store {
    /// The store, allocating Service cluster IPs and node ports with `allocator` (replacing
    /// any it had).
    pub fn with_allocator(mut self, allocator: ServiceAllocator) -> Self {
        self.allocator = Some(allocator);
        self
    }

    /// Reserves what `obj` (new, or updated from `old`) needs and writes it into `obj`;
    /// answers what was reserved and what the write frees once it succeeds. Taken or
    /// out-of-range values are 422 on the field that asked for them. `now` stamps the
    /// records (`None` on update, which has no clock).
    pub(super) async fn allocate(
        &self,
        storage: &dyn Storage,
        obj: &mut Value,
        old: Option<&Value>,
        now: Option<DateTime<Utc>>,
        dry_run: bool,
    ) -> Result<(Allocated, Allocated), ApiError> {
        let Some(allocator) = &self.allocator else {
            return Ok(Default::default());
        };
        let requested_ips: Value = obj
            .pointer("/spec/clusterIPs")
            .cloned()
            .unwrap_or_else(|| Value::Array(Vec::new()));
        allocator
            .allocate(storage, obj, old, now, dry_run)
            .await
            .map_err(|e| self.allocation_error(e, obj, requested_ips))
    }

    /// Frees `held` (what a failed write reserved, or what a done write dropped).
    pub(super) async fn release(&self, storage: &dyn Storage, held: &Allocated) {
        if let Some(allocator) = &self.allocator
            && !held.is_empty()
        {
            allocator.release(storage, held).await;
        }
    }

    /// Frees what the removed object `deleted` held; nothing on a dry run.
    pub(super) async fn release_object(&self, writes: &Persistence<'_>, deleted: &StoredObject) {
        if self.allocator.is_none() || writes.is_dry_run() {
            return;
        }
        let Ok(obj) = StoredJson::from_stored(deleted.value.clone()).and_then(|s| s.to_value())
        else {
            tracing::warn!(key = %deleted.key, "a removed Service cannot be read; its allocations stay");
            return;
        };
        let held = Allocated {
            ips: held_ips(&obj),
            ports: if crate::registry::allocator::wants_node_ports(&obj) {
                held_ports(&obj)
            } else {
                Vec::new()
            },
        };
        self.release(writes.storage(), &held).await;
    }

    /// An allocation failure as the API answers it: the field errors Kubernetes gives
    /// (`spec.clusterIPs`, `spec.ports[i].nodePort`) as 422, a full range as 500.
    fn allocation_error(&self, e: AllocError, obj: &Value, requested_ips: Value) -> ApiError {
        let name = meta_str(obj, "name");
        let field = match &e {
            AllocError::IpNotInRange { ip, .. } => FieldError::invalid(
                "spec.clusterIPs",
                requested_ips,
                format!("failed to allocate IP {ip}: {e}"),
            ),
            AllocError::IpAllocated => {
                let ip = meta_ip(obj);
                FieldError::invalid(
                    "spec.clusterIPs",
                    requested_ips,
                    format!("failed to allocate IP {ip}: {e}"),
                )
            }
            AllocError::PortNotInRange { at, port, .. }
            | AllocError::PortAllocated { at, port } => {
                FieldError::invalid(format!("spec.ports[{at}].nodePort"), *port, e.to_string())
            }
            AllocError::Full => {
                return ApiError::Internal(format!("failed to allocate a service address: {e}"));
            }
            AllocError::Contended => return ApiError::ServiceUnavailable(e.to_string()),
            AllocError::Encode(_) => return ApiError::Internal(e.to_string()),
            AllocError::Storage(s) => {
                return ApiError::from_storage(s.clone(), &self.group_resource(), name);
            }
        };
        ApiError::Invalid {
            kind: self.resource.group_kind(),
            name: name.to_owned(),
            causes: vec![field],
        }
    }
}

/// The requested cluster IP of a Service (what a taken-IP error names).
fn meta_ip(obj: &Value) -> &str {
    obj.pointer("/spec/clusterIP")
        .and_then(Value::as_str)
        .unwrap_or_default()
}
