"""watch.Watch().stream with the official Python client: watches config maps through one
replica from a list's resourceVersion while another replica creates, replaces and deletes one,
and checks that the watch reports ADDED, MODIFIED and DELETED of it, in order, with the
resourceVersions the writes answered.

Usage: watch_events.py KUBECONFIG WATCH_CONTEXT WRITE_CONTEXT
Prints a JSON summary; exits non-zero (an AssertionError) when a check fails.
"""

import json
import sys
import threading

from kubernetes import client, config, watch

NAMESPACE = "default"
NAME = "py-watched"
DEADLINE_SECONDS = 60


def main(kubeconfig, watch_context, write_context):
    watcher_api = client.CoreV1Api(
        config.new_client_from_config(config_file=kubeconfig, context=watch_context)
    )
    writer_api = client.CoreV1Api(
        config.new_client_from_config(config_file=kubeconfig, context=write_context)
    )
    start = watcher_api.list_namespaced_config_map(NAMESPACE).metadata.resource_version

    seen = []
    failure = []
    stream = watch.Watch()

    def follow():
        try:
            for event in stream.stream(
                watcher_api.list_namespaced_config_map,
                NAMESPACE,
                resource_version=start,
                timeout_seconds=DEADLINE_SECONDS,
            ):
                obj = event["object"]
                if obj.metadata.name != NAME:
                    continue
                seen.append((event["type"], obj.metadata.resource_version))
                if event["type"] == "DELETED":
                    stream.stop()
        except Exception as error:  # reported by the main thread
            failure.append(f"{type(error).__name__}: {error}")

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()

    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=NAME), data={"v": "1"})
    created = writer_api.create_namespaced_config_map(NAMESPACE, body)
    created.data = {"v": "2"}
    replaced = writer_api.replace_namespaced_config_map(NAME, NAMESPACE, created)
    writer_api.delete_namespaced_config_map(NAME, NAMESPACE)

    follower.join(DEADLINE_SECONDS + 5)
    assert not follower.is_alive(), f"no DELETED within {DEADLINE_SECONDS}s; saw {seen}"
    assert not failure, f"the watch failed: {failure}"
    kinds = [kind for kind, _ in seen]
    assert kinds == ["ADDED", "MODIFIED", "DELETED"], f"events {seen}"
    assert seen[0][1] == created.metadata.resource_version, f"{seen} vs create"
    assert seen[1][1] == replaced.metadata.resource_version, f"{seen} vs replace"
    assert int(seen[2][1]) > int(seen[1][1]), f"deletion not after the replace: {seen}"
    print(json.dumps({"start": start, "events": seen}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
