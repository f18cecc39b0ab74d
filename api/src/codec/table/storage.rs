//! Storage: persistent volumes and claims, storage classes, volume attributes classes,
//! volume attachments and the CSI kinds.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use serde_json::Value;

use super::columns::AGE;
use super::columns::Column;
use super::columns::Doc;
use super::columns::NAME;
use super::columns::schema_of;
use super::format;
use super::format::text;
use super::printer::Group;
use super::printer::PrintContext;
use super::printer::Printer;
use super::printer::Row;
use crate::flavor::Flavor;

/// The printers of this family.
pub(super) const PRINTERS: &[Printer] = &[
    Printer {
        group: Group::Core,
        resources: &["persistentvolumes"],
        columns: &[
            NAME,
            Column::string(
                "Capacity",
                Doc::Field(schema_of::<core::PersistentVolumeSpec>, "capacity"),
            ),
            Column::string(
                "Access Modes",
                Doc::Field(schema_of::<core::PersistentVolumeSpec>, "accessModes"),
            ),
            Column::string(
                "Reclaim Policy",
                Doc::Field(
                    schema_of::<core::PersistentVolumeSpec>,
                    "persistentVolumeReclaimPolicy",
                ),
            ),
            Column::string(
                "Status",
                Doc::Field(schema_of::<core::PersistentVolumeStatus>, "phase"),
            ),
            Column::string(
                "Claim",
                Doc::Field(schema_of::<core::PersistentVolumeSpec>, "claimRef"),
            ),
            Column::string("StorageClass", Doc::Text("StorageClass of the pv")),
            Column::string(
                "VolumeAttributesClass",
                Doc::Text("VolumeAttributesClass of the pv"),
            ),
            Column::string(
                "Reason",
                Doc::Field(schema_of::<core::PersistentVolumeStatus>, "reason"),
            ),
            AGE,
            Column::string(
                "VolumeMode",
                Doc::Field(schema_of::<core::PersistentVolumeSpec>, "volumeMode"),
            )
            .wide(),
        ],
        row: persistent_volume_row,
        order: None,
    },
    Printer {
        group: Group::Core,
        resources: &["persistentvolumeclaims"],
        columns: &[
            NAME,
            Column::string(
                "Status",
                Doc::Field(schema_of::<core::PersistentVolumeClaimStatus>, "phase"),
            ),
            Column::string(
                "Volume",
                Doc::Field(schema_of::<core::PersistentVolumeClaimSpec>, "volumeName"),
            ),
            Column::string(
                "Capacity",
                Doc::Field(schema_of::<core::PersistentVolumeClaimStatus>, "capacity"),
            ),
            Column::string(
                "Access Modes",
                Doc::Field(
                    schema_of::<core::PersistentVolumeClaimStatus>,
                    "accessModes",
                ),
            ),
            Column::string("StorageClass", Doc::Text("StorageClass of the pvc")),
            Column::string(
                "VolumeAttributesClass",
                Doc::Text("VolumeAttributesClass of the pvc"),
            ),
            AGE,
            Column::string(
                "VolumeMode",
                Doc::Field(schema_of::<core::PersistentVolumeClaimSpec>, "volumeMode"),
            )
            .wide(),
        ],
        row: persistent_volume_claim_row,
        order: None,
    },
    Printer {
        group: Group::Domain("storage"),
        resources: &["storageclasses"],
        columns: &[
            NAME,
            Column::string(
                "Provisioner",
                Doc::Field(schema_of::<storage::StorageClass>, "provisioner"),
            ),
            Column::string(
                "ReclaimPolicy",
                Doc::Field(schema_of::<storage::StorageClass>, "reclaimPolicy"),
            ),
            Column::string(
                "VolumeBindingMode",
                Doc::Field(schema_of::<storage::StorageClass>, "volumeBindingMode"),
            ),
            Column::string(
                "AllowVolumeExpansion",
                Doc::Field(schema_of::<storage::StorageClass>, "allowVolumeExpansion"),
            ),
            AGE,
        ],
        row: storage_class_row,
        order: None,
    },
    Printer {
        group: Group::Domain("storage"),
        resources: &["volumeattributesclasses"],
        columns: &[
            NAME,
            Column::string(
                "DriverName",
                Doc::Field(schema_of::<storage::VolumeAttributesClass>, "driverName"),
            ),
            AGE,
        ],
        row: volume_attributes_class_row,
        order: None,
    },
    Printer {
        group: Group::Domain("storage"),
        resources: &["volumeattachments"],
        columns: &[
            NAME,
            Column::string(
                "Attacher",
                Doc::Field(schema_of::<storage::VolumeAttachmentSpec>, "attacher"),
            )
            .named(),
            Column::string(
                "PV",
                Doc::Field(
                    schema_of::<storage::VolumeAttachmentSource>,
                    "persistentVolumeName",
                ),
            ),
            Column::string(
                "Node",
                Doc::Field(schema_of::<storage::VolumeAttachmentSpec>, "nodeName"),
            ),
            Column::boolean(
                "Attached",
                Doc::Field(schema_of::<storage::VolumeAttachmentStatus>, "attached"),
            ),
            AGE,
        ],
        row: volume_attachment_row,
        order: None,
    },
    Printer {
        group: Group::Domain("storage"),
        resources: &["csidrivers"],
        columns: &[
            NAME,
            Column::boolean(
                "AttachRequired",
                Doc::Field(schema_of::<storage::CSIDriverSpec>, "attachRequired"),
            ),
            Column::boolean(
                "PodInfoOnMount",
                Doc::Field(schema_of::<storage::CSIDriverSpec>, "podInfoOnMount"),
            ),
            Column::boolean(
                "StorageCapacity",
                Doc::Field(schema_of::<storage::CSIDriverSpec>, "storageCapacity"),
            ),
            Column::string(
                "TokenRequests",
                Doc::Field(schema_of::<storage::CSIDriverSpec>, "tokenRequests"),
            ),
            Column::boolean(
                "RequiresRepublish",
                Doc::Field(schema_of::<storage::CSIDriverSpec>, "requiresRepublish"),
            ),
            Column::string(
                "Modes",
                Doc::Field(schema_of::<storage::CSIDriverSpec>, "volumeLifecycleModes"),
            ),
            AGE,
        ],
        row: csi_driver_row,
        order: None,
    },
    Printer {
        group: Group::Domain("storage"),
        resources: &["csinodes"],
        columns: &[
            NAME,
            Column::integer(
                "Drivers",
                Doc::Text("Drivers indicates the number of CSI drivers registered on the node"),
            ),
            AGE,
        ],
        row: csi_node_row,
        order: None,
    },
    Printer {
        group: Group::Domain("storage"),
        resources: &["csistoragecapacities"],
        columns: &[
            NAME,
            Column::string(
                "StorageClassName",
                Doc::Field(schema_of::<storage::CSIStorageCapacity>, "storageClassName"),
            ),
            Column::string(
                "Capacity",
                Doc::Field(schema_of::<storage::CSIStorageCapacity>, "capacity"),
            ),
        ],
        row: csi_storage_capacity_row,
        order: None,
    },
];

fn name(v: &Value) -> Value {
    text(v, "/metadata/name").into()
}

/// Access modes abbreviated in Kubernetes' fixed order (`RWO,ROX,RWX,RWOP`).
fn access_modes(v: &Value, pointer: &str) -> String {
    let modes: Vec<&str> = format::items(v, pointer)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The storage class: the beta annotation when set, else `spec.storageClassName`.
fn storage_class(v: &Value, flavor: Flavor) -> String {
    let annotation = format!("volume.beta.{}/storage-class", flavor.label_domain());
    match format::map(v, "/metadata/annotations").and_then(|a| a.get(&annotation)) {
        Some(class) => class.as_str().unwrap_or_default().to_owned(),
        None => text(v, "/spec/storageClassName").to_owned(),
    }
}

/// A quantity's text as stored, `0` when absent.
fn quantity(v: &Value, pointer: &str) -> String {
    match v.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_owned(),
    }
}

fn deleting(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp")
        .is_some_and(|d| !d.is_null())
}

fn persistent_volume_row(pv: &Value, ctx: &PrintContext) -> Row {
    let claim = match pv.pointer("/spec/claimRef") {
        Some(c) if c.is_object() => format!("{}/{}", text(c, "/namespace"), text(c, "/name")),
        _ => String::new(),
    };
    let phase = if deleting(pv) {
        "Terminating"
    } else {
        text(pv, "/status/phase")
    };
    vec![
        name(pv),
        quantity(pv, "/spec/capacity/storage").into(),
        access_modes(pv, "/spec/accessModes").into(),
        text(pv, "/spec/persistentVolumeReclaimPolicy").into(),
        phase.into(),
        claim.into(),
        storage_class(pv, ctx.flavor).into(),
        format::or(text(pv, "/spec/volumeAttributesClassName"), "<unset>").into(),
        text(pv, "/status/reason").into(),
        format::age(pv, ctx.now).into(),
        format::or(text(pv, "/spec/volumeMode"), "<unset>").into(),
    ]
    .into()
}

fn persistent_volume_claim_row(pvc: &Value, ctx: &PrintContext) -> Row {
    let phase = if deleting(pvc) {
        "Terminating"
    } else {
        text(pvc, "/status/phase")
    };
    let volume = text(pvc, "/spec/volumeName");
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(pvc, "/status/capacity/storage"),
            access_modes(pvc, "/status/accessModes"),
        )
    };
    vec![
        name(pvc),
        phase.into(),
        volume.into(),
        capacity.into(),
        modes.into(),
        storage_class(pvc, ctx.flavor).into(),
        format::or(text(pvc, "/spec/volumeAttributesClassName"), "<unset>").into(),
        format::age(pvc, ctx.now).into(),
        format::or(text(pvc, "/spec/volumeMode"), "<unset>").into(),
    ]
    .into()
}

fn storage_class_row(class: &Value, ctx: &PrintContext) -> Row {
    let domain = ctx.flavor.label_domain();
    let annotations = format::map(class, "/metadata/annotations");
    let is_default = [
        format!("storageclass.{domain}/is-default-class"),
        format!("storageclass.beta.{domain}/is-default-class"),
    ]
    .iter()
    .any(|key| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .is_some_and(|v| v == "true")
    });
    let mut name = text(class, "/metadata/name").to_owned();
    if is_default {
        name.push_str(" (default)");
    }
    vec![
        name.into(),
        text(class, "/provisioner").into(),
        format::or(text(class, "/reclaimPolicy"), "Delete").into(),
        format::or(text(class, "/volumeBindingMode"), "Immediate").into(),
        format::flag(class, "/allowVolumeExpansion")
            .unwrap_or(false)
            .into(),
        format::age(class, ctx.now).into(),
    ]
    .into()
}

fn volume_attributes_class_row(class: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(class),
        text(class, "/driverName").into(),
        format::age(class, ctx.now).into(),
    ]
    .into()
}

fn volume_attachment_row(va: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(va),
        text(va, "/spec/attacher").into(),
        text(va, "/spec/source/persistentVolumeName").into(),
        text(va, "/spec/nodeName").into(),
        format::flag(va, "/status/attached").unwrap_or(false).into(),
        format::age(va, ctx.now).into(),
    ]
    .into()
}

fn csi_driver_row(driver: &Value, ctx: &PrintContext) -> Row {
    let modes: Vec<&str> = format::items(driver, "/spec/volumeLifecycleModes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let tokens = match driver.pointer("/spec/tokenRequests") {
        Some(Value::Array(requests)) => requests
            .iter()
            .map(|t| text(t, "/audience"))
            .collect::<Vec<_>>()
            .join(","),
        _ => "<unset>".to_owned(),
    };
    vec![
        name(driver),
        format::flag(driver, "/spec/attachRequired")
            .unwrap_or(true)
            .into(),
        format::flag(driver, "/spec/podInfoOnMount")
            .unwrap_or(false)
            .into(),
        format::flag(driver, "/spec/storageCapacity")
            .unwrap_or(false)
            .into(),
        tokens.into(),
        format::flag(driver, "/spec/requiresRepublish")
            .unwrap_or(false)
            .into(),
        format::or(&modes.join(","), "<none>").into(),
        format::age(driver, ctx.now).into(),
    ]
    .into()
}

fn csi_node_row(node: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(node),
        format::count(node, "/spec/drivers").into(),
        format::age(node, ctx.now).into(),
    ]
    .into()
}

fn csi_storage_capacity_row(capacity: &Value, _: &PrintContext) -> Row {
    let amount = match capacity.get("capacity") {
        Some(Value::String(s)) => s.clone(),
        _ => "<unset>".to_owned(),
    };
    vec![
        name(capacity),
        text(capacity, "/storageClassName").into(),
        amount.into(),
    ]
    .into()
}

#[cfg(test)]
#[path = "storage_tests.rs"]
mod tests;
