"""Server-side apply with the official Python client: patch_namespaced_config_map with the apply
content type (_content_type="application/apply-patch+yaml", a dict body the client sends as JSON,
which is YAML) and a field_manager, each call through a replica in turn. The first apply creates
the config map, the second updates it; managedFields are read back from each answer and from a
GET. Then another manager changing an owned value is refused with 409 Conflict, one
FieldManagerConflict cause naming the field and its manager, and the object is unchanged.

Usage: server_side_apply.py KUBECONFIG CONTEXT[,CONTEXT...]
Prints a JSON summary; exits non-zero (an AssertionError) when a check fails.
"""

import datetime
import json
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException

NAMESPACE = "default"
NAME = "py-applied"
MANAGER = "py-applier"
APPLY = "application/apply-patch+yaml"


def manifest(data):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "data": data,
    }


def apply(core, data, manager, force=None):
    return core.patch_namespaced_config_map(
        NAME, NAMESPACE, manifest(data), field_manager=manager, force=force, _content_type=APPLY
    )


def only_entry(obj, manager):
    """The one managedFields entry of `manager`, checked as an Apply entry."""
    entries = [e for e in obj.metadata.managed_fields or [] if e.manager == manager]
    assert len(entries) == 1, obj.metadata.managed_fields
    entry = entries[0]
    assert entry.operation == "Apply", entry
    assert entry.api_version == "v1", entry
    assert entry.fields_type == "FieldsV1", entry
    assert isinstance(entry.time, datetime.datetime), entry
    return entry


def main(kubeconfig, contexts):
    cores = [
        client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig, context=c))
        for c in contexts
    ]
    first, second, third = cores[0], cores[1 % len(cores)], cores[2 % len(cores)]

    created = apply(first, {"a": "1"}, MANAGER)
    assert created.data == {"a": "1"}, created.data
    entry = only_entry(created, MANAGER)
    assert entry.fields_v1 == {"f:data": {"f:a": {}}}, entry.fields_v1

    updated = apply(second, {"a": "2", "b": "3"}, MANAGER)
    assert updated.data == {"a": "2", "b": "3"}, updated.data
    assert updated.metadata.uid == created.metadata.uid
    assert int(updated.metadata.resource_version) > int(created.metadata.resource_version)
    assert len(updated.metadata.managed_fields) == 1, updated.metadata.managed_fields
    entry = only_entry(updated, MANAGER)
    assert entry.fields_v1 == {"f:data": {"f:a": {}, "f:b": {}}}, entry.fields_v1

    read = third.read_namespaced_config_map(NAME, NAMESPACE)
    assert only_entry(read, MANAGER).fields_v1 == entry.fields_v1, read.metadata.managed_fields

    try:
        apply(first, {"a": "other"}, "py-other")
        raise AssertionError("a conflicting apply succeeded")
    except ApiException as error:
        status = json.loads(error.body)
        assert (error.status, status["reason"]) == (409, "Conflict"), status
        causes = status["details"]["causes"]
        assert causes == [
            {
                "reason": "FieldManagerConflict",
                "message": f'conflict with "{MANAGER}"',
                "field": ".data.a",
            }
        ], causes
        message = status["message"]
    kept = second.read_namespaced_config_map(NAME, NAMESPACE)
    assert kept.data == {"a": "2", "b": "3"}, kept.data
    assert kept.metadata.resource_version == updated.metadata.resource_version

    print(
        json.dumps(
            {
                "data": kept.data,
                "fieldsV1": entry.fields_v1,
                "conflict": message,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","))
