"""Patch and delete with the official Python client, each call through a replica in turn: a JSON
Patch (a list body), a strategic merge patch (the client's default for a dict body) and a JSON
merge patch (chosen with _content_type) of a config map, checking the data each answers; a
Deployment created through AppsV1Api and scaled by a strategic merge patch; then a delete whose
resourceVersion precondition is stale (409 Conflict, the object kept), a delete with the current
one through another replica, and a read that is 404 NotFound.

Usage: patch_delete.py KUBECONFIG CONTEXT[,CONTEXT...]
Prints a JSON summary; exits non-zero (an AssertionError) when a check fails.
"""

import json
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException

NAMESPACE = "default"
NAME = "py-patched"
DEPLOYMENT = "py-deployment"


def failure(call):
    """The ApiException `call` raises, parsed Status body included; fails when it succeeds."""
    try:
        call()
    except ApiException as error:
        return error.status, json.loads(error.body)
    raise AssertionError("the call succeeded")


def patch_configmap(cores):
    first, second, third = cores[0], cores[1 % len(cores)], cores[2 % len(cores)]
    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=NAME, labels={"step": "created"}), data={"a": "1"}
    )
    created = first.create_namespaced_config_map(NAMESPACE, body)

    json_patched = second.patch_namespaced_config_map(
        NAME, NAMESPACE, [{"op": "add", "path": "/data/b", "value": "2"}]
    )
    assert json_patched.data == {"a": "1", "b": "2"}, json_patched.data
    strategic = third.patch_namespaced_config_map(
        NAME, NAMESPACE, {"metadata": {"labels": {"step": "strategic"}}}
    )
    assert strategic.metadata.labels == {"step": "strategic"}, strategic.metadata.labels
    merged = first.patch_namespaced_config_map(
        NAME,
        NAMESPACE,
        {"data": {"a": None, "c": "3"}},
        _content_type="application/merge-patch+json",
    )
    assert merged.data == {"b": "2", "c": "3"}, merged.data
    versions = [
        int(o.metadata.resource_version) for o in (created, json_patched, strategic, merged)
    ]
    assert versions == sorted(set(versions)), f"each patch a newer resourceVersion: {versions}"
    return created, merged


def scale_deployment(apps):
    labels = {"app": DEPLOYMENT}
    body = client.V1Deployment(
        metadata=client.V1ObjectMeta(name=DEPLOYMENT, labels=labels),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    containers=[client.V1Container(name="web", image="nginx:1.27")]
                ),
            ),
        ),
    )
    created = apps[0].create_namespaced_deployment(NAMESPACE, body)
    assert created.spec.template.spec.containers[0].image == "nginx:1.27"
    scaled = apps[1 % len(apps)].patch_namespaced_deployment(
        DEPLOYMENT, NAMESPACE, {"spec": {"replicas": 3}}
    )
    assert scaled.spec.replicas == 3, scaled.spec.replicas
    apps[2 % len(apps)].delete_namespaced_deployment(DEPLOYMENT, NAMESPACE)
    code, status = failure(
        lambda: apps[0].read_namespaced_deployment(DEPLOYMENT, NAMESPACE)
    )
    assert (code, status["reason"]) == (404, "NotFound"), status


def delete_configmap(cores, created, current):
    stale = client.V1DeleteOptions(
        preconditions=client.V1Preconditions(
            resource_version=created.metadata.resource_version
        )
    )
    code, status = failure(
        lambda: cores[1 % len(cores)].delete_namespaced_config_map(
            NAME, NAMESPACE, body=stale
        )
    )
    assert (code, status["reason"]) == (409, "Conflict"), status
    kept = cores[0].read_namespaced_config_map(NAME, NAMESPACE)
    assert kept.metadata.resource_version == current.metadata.resource_version

    fresh = client.V1DeleteOptions(
        preconditions=client.V1Preconditions(
            resource_version=current.metadata.resource_version, uid=current.metadata.uid
        )
    )
    cores[2 % len(cores)].delete_namespaced_config_map(NAME, NAMESPACE, body=fresh)
    code, status = failure(lambda: cores[0].read_namespaced_config_map(NAME, NAMESPACE))
    assert (code, status["reason"]) == (404, "NotFound"), status


def main(kubeconfig, contexts):
    api_clients = [
        config.new_client_from_config(config_file=kubeconfig, context=c) for c in contexts
    ]
    cores = [client.CoreV1Api(c) for c in api_clients]
    apps = [client.AppsV1Api(c) for c in api_clients]
    created, patched = patch_configmap(cores)
    scale_deployment(apps)
    delete_configmap(cores, created, patched)
    print(json.dumps({"patched": patched.data, "resourceVersion": patched.metadata.resource_version}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","))
