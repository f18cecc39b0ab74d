"""Paged list with the official Python client: creates config maps through every replica, then
pages through them with limit/_continue, each page from the next replica, and checks that the
pages together hold every object exactly once, all at the first page's resourceVersion.

Usage: paged_list.py KUBECONFIG CONTEXT[,CONTEXT...] COUNT LIMIT
Prints a JSON summary; exits non-zero (an AssertionError) when a check fails.
"""

import json
import math
import sys

from kubernetes import client, config

NAMESPACE = "default"
PREFIX = "py-page-"


def main(kubeconfig, contexts, count, limit):
    apis = [
        client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig, context=c))
        for c in contexts
    ]
    created = []
    for i in range(count):
        api = apis[i % len(apis)]
        body = client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name=f"{PREFIX}{i:03}"), data={"i": str(i)}
        )
        created.append(api.create_namespaced_config_map(NAMESPACE, body).metadata.name)

    names, versions, token, pages = [], set(), None, 0
    while True:
        api = apis[pages % len(apis)]
        page = api.list_namespaced_config_map(NAMESPACE, limit=limit, _continue=token)
        pages += 1
        assert len(page.items) <= limit, f"page {pages} has {len(page.items)} > {limit} items"
        names.extend(item.metadata.name for item in page.items)
        versions.add(page.metadata.resource_version)
        token = page.metadata._continue
        if not token:
            break
        assert pages <= count + 10, "the continue chain does not end"

    ours = [n for n in names if n.startswith(PREFIX)]
    assert len(names) == len(set(names)), f"an object listed twice: {names}"
    assert sorted(ours) == sorted(created), f"listed {ours}, created {created}"
    assert len(versions) == 1, f"pages at several resourceVersions: {versions}"
    assert pages == math.ceil(len(names) / limit), f"{pages} pages for {len(names)} items"
    print(json.dumps({"pages": pages, "items": len(names), "resourceVersion": versions.pop()}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]))
