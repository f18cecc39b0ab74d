use chrono::TimeZone;
use chrono::Utc;
use serde_json::json;

use super::*;

fn ctx(flavor: Flavor) -> PrintContext {
    PrintContext {
        now: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 30).unwrap(),
        flavor,
    }
}

#[test]
fn volumes_and_claims() {
    let pv = json!({
        "metadata": {"name": "pv1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast",
                 "claimRef": {"namespace": "default", "name": "data"}, "volumeMode": "Filesystem"},
        "status": {"phase": "Bound"}
    });
    assert_eq!(
        persistent_volume_row(&pv, &ctx(Flavor::Kubernetes)).cells,
        vec![
            json!("pv1"),
            json!("10Gi"),
            json!("RWO,RWX"),
            json!("Retain"),
            json!("Bound"),
            json!("default/data"),
            json!("fast"),
            json!("<unset>"),
            json!(""),
            json!("30s"),
            json!("Filesystem")
        ]
    );
    let pending = json!({"metadata": {"name": "data", "annotations": {"volume.beta.platform.io/storage-class": "old"}},
        "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}});
    assert_eq!(
        persistent_volume_claim_row(&pending, &ctx(Flavor::Platform)).cells[1..6],
        [
            json!("Pending"),
            json!(""),
            json!(""),
            json!(""),
            json!("old")
        ]
    );
    let bound = json!({"metadata": {"name": "data"}, "spec": {"volumeName": "pv1"},
        "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"]}});
    assert_eq!(
        persistent_volume_claim_row(&bound, &ctx(Flavor::Kubernetes)).cells[1..5],
        [json!("Bound"), json!("pv1"), json!("10Gi"), json!("RWO")]
    );
}

#[test]
fn storage_classes_mark_the_default_in_the_flavor_domain() {
    let class = |domain: &str| {
        json!({"metadata": {"name": "standard", "annotations": {format!("storageclass.{domain}/is-default-class"): "true"}},
               "provisioner": "csi.example.com"})
    };
    assert_eq!(
        storage_class_row(&class("kubernetes.io"), &ctx(Flavor::Kubernetes)).cells[..5],
        [
            json!("standard (default)"),
            json!("csi.example.com"),
            json!("Delete"),
            json!("Immediate"),
            json!(false)
        ]
    );
    assert_eq!(
        storage_class_row(&class("platform.io"), &ctx(Flavor::Platform)).cells[0],
        json!("standard (default)")
    );
    assert_eq!(
        storage_class_row(&class("platform.io"), &ctx(Flavor::Kubernetes)).cells[0],
        json!("standard")
    );
}

#[test]
fn csi_kinds_and_attachments() {
    let driver = json!({"metadata": {"name": "csi.example.com"}, "spec": {"volumeLifecycleModes": ["Persistent", "Ephemeral"]}});
    assert_eq!(
        csi_driver_row(&driver, &ctx(Flavor::Kubernetes)).cells[1..7],
        [
            json!(true),
            json!(false),
            json!(false),
            json!("<unset>"),
            json!(false),
            json!("Persistent,Ephemeral")
        ]
    );
    let node =
        json!({"metadata": {"name": "n"}, "spec": {"drivers": [{"name": "a"}, {"name": "b"}]}});
    assert_eq!(
        csi_node_row(&node, &ctx(Flavor::Kubernetes)).cells[1],
        json!(2)
    );
    let va = json!({"metadata": {"name": "va"}, "spec": {"attacher": "csi", "nodeName": "n", "source": {"persistentVolumeName": "pv1"}}, "status": {"attached": true}});
    assert_eq!(
        volume_attachment_row(&va, &ctx(Flavor::Kubernetes)).cells[1..5],
        [json!("csi"), json!("pv1"), json!("n"), json!(true)]
    );
    let cap = json!({"metadata": {"name": "c"}, "storageClassName": "fast"});
    assert_eq!(
        csi_storage_capacity_row(&cap, &ctx(Flavor::Kubernetes)).cells[2],
        json!("<unset>")
    );
}
