//! The upkeep of the bootstrap FlowSchemas and PriorityLevelConfigurations at start, as
//! Kubernetes' configuration producer does it: missing objects are created; a mandatory one
//! is forced back to its bootstrap spec (the `exempt` level keeps its operator-set shares and
//! lending) with the autoupdate annotation `true`; a suggested one is brought back only when
//! its annotation says `true` — an object without the annotation gets `true` if it was
//! never changed (generation 1) and `false` otherwise. Writes go through the normal create
//! and update paths; an update that changes nothing writes nothing, so every replica may run
//! it.

use std::collections::HashMap;

use serde_json::Value;

use super::objects;
use crate::config::Clock;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::registry::Registry;
use crate::registry::Store;
use crate::registry::StoredJson;
use crate::registry::WriteOptions;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// Creates or brings back the bootstrap flow-control objects. `clock` stamps them and
/// `random` draws their uids.
pub async fn ensure_flow_control_objects(
    storage: &dyn Storage,
    flavor: Flavor,
    clock: &dyn Clock,
    random: &RandomSource,
) -> Result<(), ApiError> {
    let registry = Registry::builtin(flavor).with_random(random);
    let group = format!("flowcontrol.apiserver.{}", flavor.group_domain());
    let store = |plural| {
        registry
            .builtin_store(&group, "v1", plural)
            .ok_or_else(|| ApiError::Internal(format!("{plural} are not served")))
    };
    let (schemas, levels) = (store("flowschemas")?, store("prioritylevelconfigurations")?);
    let (current_schemas, current_levels) = (
        stored(storage, schemas).await?,
        stored(storage, levels).await?,
    );
    let (mandatory_schemas, mandatory_levels) = objects::mandatory(flavor);
    let (suggested_schemas, suggested_levels) = objects::suggested(flavor);
    // Levels first, so no schema points at a missing level.
    let work = [
        (levels, &current_levels, mandatory_levels, true),
        (levels, &current_levels, suggested_levels, false),
        (schemas, &current_schemas, mandatory_schemas, true),
        (schemas, &current_schemas, suggested_schemas, false),
    ];
    for (store, current, objects, mandatory) in work {
        for object in objects {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let target = Target {
                store,
                current: current.get(name),
                desired: &object,
                mandatory,
            };
            ensure(storage, flavor, clock, target).await?;
        }
    }
    Ok(())
}

/// The stored objects of `store` by name, read once (one quorum read per kind).
async fn stored(storage: &dyn Storage, store: &Store) -> Result<HashMap<String, Value>, ApiError> {
    let prefix = store.resource().key_prefix();
    let page = storage
        .list(&prefix, None, 0, ReadConsistency::Linearizable)
        .await
        .map_err(|e| ApiError::from_storage(e, &store.resource().group_resource(), ""))?;
    let mut objects = HashMap::new();
    for item in page.items {
        let value = StoredJson::from_stored(item.value)
            .and_then(|stored| stored.to_value())
            .map_err(|e| ApiError::Internal(format!("stored {} does not parse: {e}", item.key)))?;
        let name = value["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        objects.insert(name, value);
    }
    Ok(objects)
}

/// One bootstrap object: its store, its stored version if any, its bootstrap version.
struct Target<'a> {
    store: &'a Store,
    current: Option<&'a Value>,
    desired: &'a Value,
    mandatory: bool,
}

async fn ensure(
    storage: &dyn Storage,
    flavor: Flavor,
    clock: &dyn Clock,
    target: Target<'_>,
) -> Result<(), ApiError> {
    let Target {
        store,
        current,
        desired,
        mandatory,
    } = target;
    let name = desired["metadata"]["name"].as_str().unwrap_or_default();
    let Some(current) = current else {
        let body = desired.to_string();
        let created = store
            .create(
                storage,
                "",
                body.as_bytes(),
                clock.now(),
                WriteOptions::default(),
            )
            .await;
        return match created {
            Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(e),
        };
    };
    let key = objects::autoupdate_annotation(flavor);
    let annotation = current["metadata"]["annotations"][&key].as_str();
    let generation = current["metadata"]["generation"].as_i64().unwrap_or(1);
    let (update_spec, value) = match (mandatory, annotation) {
        (true, _) | (false, Some("true")) => (true, "true"),
        (false, None) if generation == 1 => (true, "true"),
        (false, None) => (false, "false"),
        (false, Some(_)) => return Ok(()),
    };
    let is_exempt_level =
        mandatory && name == "exempt" && desired["kind"] == "PriorityLevelConfiguration";
    let change = |obj: &mut Value| {
        if update_spec {
            let mut spec = desired["spec"].clone();
            if is_exempt_level {
                // The operator's shares and lending of `exempt` are kept.
                for field in ["nominalConcurrencyShares", "lendablePercent"] {
                    if let Some(v) = obj.pointer(&format!("/spec/exempt/{field}")) {
                        spec["exempt"][field] = v.clone();
                    }
                }
            }
            obj["spec"] = spec;
        }
        let meta = &mut obj["metadata"];
        if !meta["annotations"].is_object() {
            meta["annotations"] = Value::Object(Default::default());
        }
        meta["annotations"][&key] = Value::from(value);
    };
    let mut wanted = current.clone();
    change(&mut wanted);
    if &wanted == current {
        return Ok(());
    }
    store
        .guaranteed_update(storage, "", name, None, false, |obj| {
            change(obj);
            Ok(())
        })
        .await
        .map(drop)
}
