// Watches with the official JavaScript client (@kubernetes/client-node): its `Watch` follows
// config maps through one replica from a list's resourceVersion, and an informer
// (`makeInformer`: list, then watch, kept in a cache) through another, while a third replica
// creates, patches and deletes one. The watch must report ADDED, MODIFIED and DELETED of it, in
// order, with the resourceVersions the writes answered; the informer must call add, update and
// delete and end without the object in its cache.
//
// Usage: node watch_events.mjs KUBECONFIG WATCH_CONTEXT INFORMER_CONTEXT WRITE_CONTEXT
// Prints a JSON summary; exits non-zero (an AssertionError) when a check fails.

import assert from 'node:assert/strict';

import * as k8s from '@kubernetes/client-node';

const NAMESPACE = 'default';
const NAME = 'js-watched';
const PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
const DEADLINE_MS = 60_000;

function kubeConfig(kubeconfig, context) {
  const config = new k8s.KubeConfig();
  config.loadFromFile(kubeconfig);
  config.setCurrentContext(context);
  return config;
}

/** A promise and the function that settles it, failing after DEADLINE_MS with `what`. */
function deadline(what) {
  let settle;
  const promise = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${DEADLINE_MS} ms`)), DEADLINE_MS);
    settle = (value) => {
      clearTimeout(timer);
      resolve(value);
    };
  });
  return { promise, settle };
}

async function main([kubeconfig, watchContext, informerContext, writeContext]) {
  const watchConfig = kubeConfig(kubeconfig, watchContext);
  const start = (await watchConfig.makeApiClient(k8s.CoreV1Api).listNamespacedConfigMap({ namespace: NAMESPACE }))
    .metadata.resourceVersion;

  const seen = [];
  const watched = deadline(`no DELETED of ${NAME} from the watch`);
  const ended = [];
  const controller = await new k8s.Watch(watchConfig).watch(
    PATH,
    { resourceVersion: start },
    (type, object) => {
      if (object.metadata.name !== NAME) return;
      seen.push([type, object.metadata.resourceVersion]);
      if (type === 'DELETED') watched.settle();
    },
    (error) => ended.push(String(error)),
  );

  const informerConfig = kubeConfig(kubeconfig, informerContext);
  const informerApi = informerConfig.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(informerConfig, PATH, () =>
    informerApi.listNamespacedConfigMap({ namespace: NAMESPACE }),
  );
  const calls = [];
  const informed = deadline(`no delete of ${NAME} from the informer`);
  for (const verb of [k8s.ADD, k8s.UPDATE, k8s.DELETE]) {
    informer.on(verb, (object) => {
      if (object.metadata.name !== NAME) return;
      calls.push(verb);
      if (verb === k8s.DELETE) informed.settle();
    });
  }
  let stopping = false;
  informer.on(k8s.ERROR, (error) => stopping || calls.push(`error: ${error}`));
  await informer.start();

  const writer = kubeConfig(kubeconfig, writeContext).makeApiClient(k8s.CoreV1Api);
  const body = { metadata: { name: NAME }, data: { v: '1' } };
  const created = await writer.createNamespacedConfigMap({ namespace: NAMESPACE, body });
  const patched = await writer.patchNamespacedConfigMap(
    { name: NAME, namespace: NAMESPACE, body: { data: { v: '2' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  await writer.deleteNamespacedConfigMap({ name: NAME, namespace: NAMESPACE });

  await watched.promise;
  await informed.promise;
  stopping = true;
  controller.abort();
  await informer.stop();

  assert.deepEqual(
    seen.map(([type]) => type),
    ['ADDED', 'MODIFIED', 'DELETED'],
    `watch events ${JSON.stringify(seen)} (ended: ${ended})`,
  );
  assert.equal(seen[0][1], created.metadata.resourceVersion, 'ADDED at the create');
  assert.equal(seen[1][1], patched.metadata.resourceVersion, 'MODIFIED at the patch');
  assert.ok(Number(seen[2][1]) > Number(seen[1][1]), 'the deletion after the patch');
  assert.deepEqual(calls, [k8s.ADD, k8s.UPDATE, k8s.DELETE], `informer calls ${calls}`);
  assert.ok(!informer.list(NAMESPACE).some((object) => object.metadata.name === NAME), 'gone from the cache');
  console.log(JSON.stringify({ start, events: seen, informer: calls }));
}

await main(process.argv.slice(2));
