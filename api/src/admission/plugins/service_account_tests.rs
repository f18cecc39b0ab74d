//! Tests of the ServiceAccount plugin: the token volume, mounts, automount, mirror pods.

use super::*;

fn spec_of(pod: &mut Value) -> &mut Map<String, Value> {
    pod["spec"].as_object_mut().expect("a spec")
}

#[test]
fn the_token_volume_is_shaped_as_kubernetes_shapes_it() {
    let expected = json!({
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt",
                           "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": 420,
    });
    let source = token_volume_source();
    assert_eq!(source, expected);
    assert_eq!(
        serde_json::to_string(&source).unwrap(),
        serde_json::to_string(&expected).unwrap(),
        "the field order of the Go structs"
    );
}

#[test]
fn every_container_mounts_the_token_unless_it_mounts_something_there() {
    let mut pod = json!({"spec": {
        "initContainers": [{"name": "init"}],
        "containers": [
            {"name": "a", "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
            {"name": "b", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
    }});
    mount_token(spec_of(&mut pod), || "kube-api-access-abcde".to_owned());
    let mount = json!({"name": "kube-api-access-abcde", "readOnly": true,
                       "mountPath": TOKEN_MOUNT_PATH});
    assert_eq!(
        pod["spec"]["initContainers"][0]["volumeMounts"],
        json!([mount])
    );
    assert_eq!(
        pod["spec"]["containers"][0]["volumeMounts"],
        json!([{"name": "data", "mountPath": "/data"}, mount])
    );
    assert_eq!(
        pod["spec"]["containers"][1]["volumeMounts"],
        json!([{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]),
        "an existing mount at the path is left alone"
    );
    assert_eq!(
        pod["spec"]["volumes"],
        json!([{"name": "data", "emptyDir": {}},
               {"name": "kube-api-access-abcde", "projected": token_volume_source()}])
    );
}

#[test]
fn no_volume_when_no_container_needs_it_and_an_existing_one_is_reused() {
    let mut pod = json!({"spec": {"containers": [
        {"name": "a", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT_PATH}]}]}});
    mount_token(spec_of(&mut pod), || "kube-api-access-unused".to_owned());
    assert_eq!(pod["spec"].get("volumes"), None);

    let mut pod = json!({"spec": {
        "containers": [{"name": "a"}],
        "volumes": [{"name": "kube-api-access-zzzzz", "emptyDir": {}}],
    }});
    mount_token(spec_of(&mut pod), || {
        unreachable!("the pod's volume is used")
    });
    assert_eq!(
        pod["spec"]["containers"][0]["volumeMounts"][0]["name"],
        "kube-api-access-zzzzz"
    );
    assert_eq!(pod["spec"]["volumes"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_pod_decides_automounting_before_its_account() {
    let off = json!({"automountServiceAccountToken": false});
    let on = json!({"automountServiceAccountToken": true});
    let unset = json!({});
    let pod = |v: &Value| json!({"spec": v});
    assert!(automounts(&unset, &pod(&unset)));
    assert!(!automounts(&off, &pod(&unset)));
    assert!(automounts(&off, &pod(&on)));
    assert!(!automounts(&on, &pod(&off)));
}

#[test]
fn mirror_pods_reference_no_accounts_secrets_or_tokens() {
    let plain = json!({"spec": {"containers": [{"name": "a"}]}});
    assert_eq!(mirror_refusal(&plain), None);
    let named = json!({"spec": {"serviceAccountName": "x"}});
    assert_eq!(
        mirror_refusal(&named),
        Some("a mirror pod may not reference service accounts")
    );
    for pod in [
        json!({"spec": {"imagePullSecrets": [{"name": "s"}]}}),
        json!({"spec": {"containers": [{"name": "a", "envFrom": [{"secretRef": {"name": "s"}}]}]}}),
        json!({"spec": {"initContainers": [{"name": "a", "env": [
            {"name": "E", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]}}),
        json!({"spec": {"volumes": [{"name": "v", "secret": {"secretName": "s"}}]}}),
        json!({"spec": {"volumes": [{"name": "v", "csi": {"driver": "d",
            "nodePublishSecretRef": {"name": "s"}}}]}}),
        json!({"spec": {"volumes": [{"name": "v", "projected": {"sources": [
            {"secret": {"name": "s"}}]}}]}}),
    ] {
        assert_eq!(
            mirror_refusal(&pod),
            Some("a mirror pod may not reference secrets"),
            "{pod}"
        );
    }
    let token = json!({"spec": {"volumes": [{"name": "v", "projected": {"sources": [
        {"serviceAccountToken": {"path": "token"}}]}}]}});
    assert_eq!(
        mirror_refusal(&token),
        Some("a mirror pod may not use ServiceAccountToken volume projections")
    );
}

#[test]
fn an_enforcing_account_names_the_first_secret_it_does_not_list() {
    let account = json!({"metadata": {"name": "sa"},
        "secrets": [{"name": "listed"}], "imagePullSecrets": [{"name": "pull"}]});
    let ok = json!({"spec": {
        "volumes": [{"name": "v", "secret": {"secretName": "listed"}}],
        "containers": [{"name": "c",
            "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "listed", "key": "k"}}}],
            "envFrom": [{"secretRef": {"name": "listed"}}, {"configMapRef": {"name": "any"}}]}],
        "imagePullSecrets": [{"name": "pull"}],
    }});
    assert_eq!(unlisted_secret(&account, &ok, false), None);
    let refused = |pod: Value, ephemeral: bool| unlisted_secret(&account, &pod, ephemeral);
    let tail = "is not allowed because service account sa does not reference that secret";
    assert_eq!(
        refused(
            json!({"spec": {"volumes": [{"name": "v", "secret": {"secretName": "x"}}]}}),
            false
        ),
        Some(format!("volume with secret.secretName=\"x\" {tail}"))
    );
    let env = json!([{"name": "E", "valueFrom": {"secretKeyRef": {"name": "x", "key": "k"}}}]);
    assert_eq!(
        refused(
            json!({"spec": {"initContainers": [{"name": "i", "env": env}]}}),
            false
        ),
        Some(format!(
            "init container i with envVar E referencing secret.secretName=\"x\" {tail}"
        ))
    );
    let from = json!([{"secretRef": {"name": "x"}}]);
    assert_eq!(
        refused(
            json!({"spec": {"containers": [{"name": "c", "envFrom": from}]}}),
            false
        ),
        Some(format!(
            "container c with envFrom referencing secret.secretName=\"x\" {tail}"
        ))
    );
    assert_eq!(
        refused(json!({"spec": {"imagePullSecrets": [{"name": "pull"}, {"name": "y"}]}}), false),
        Some("imagePullSecrets[1].name=\"y\" is not allowed because service account sa does not reference that imagePullSecret".to_owned())
    );
    let ephemeral = json!({"spec": {
        "volumes": [{"name": "v", "secret": {"secretName": "x"}}],
        "ephemeralContainers": [{"name": "debug", "env": env}]}});
    assert_eq!(
        refused(ephemeral, true),
        Some(format!(
            "ephemeral container debug with envVar E referencing secret.secretName=\"x\" {tail}"
        ))
    );
}
