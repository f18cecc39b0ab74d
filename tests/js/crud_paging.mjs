// Create, paged list, patch and delete with the official JavaScript client
// (@kubernetes/client-node, pinned in package.json), each call through a replica in turn.
//
// Creates COUNT config maps, pages through them with limit/_continue (each page from the next
// replica; every object exactly once, every page at the first page's resourceVersion), patches
// one with each patch type the client offers but server-side apply, which Apiary does not serve
// yet (JSON Patch, merge, strategic merge), checks that a stale replace is a 409 ApiException carrying the Status, deletes through
// another replica and reads a 404; then creates, patches and deletes a Deployment through
// AppsV1Api. Objects come back as the client's own model classes (V1ConfigMap, Date timestamps).
//
// Usage: node crud_paging.mjs KUBECONFIG CONTEXT[,CONTEXT...] COUNT LIMIT
// Prints a JSON summary; exits non-zero (an AssertionError) when a check fails.

import assert from 'node:assert/strict';

import * as k8s from '@kubernetes/client-node';

const NAMESPACE = 'default';
const PREFIX = 'js-page-';
const PATCHED = 'js-patched';
const DEPLOYMENT = 'js-deployment';

/** An API client of class `Api` through `context` of the kubeconfig file. */
function client(kubeconfig, context, Api) {
  const config = new k8s.KubeConfig();
  config.loadFromFile(kubeconfig);
  config.setCurrentContext(context);
  return config.makeApiClient(Api);
}

/** The request options that send a patch body as `strategy`. */
function as(strategy) {
  return k8s.setHeaderOptions('Content-Type', strategy);
}

/** The ApiException `call` is rejected with; fails when it succeeds. */
async function rejection(call) {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof k8s.ApiException, `not an ApiException: ${error}`);
    return error;
  }
  assert.fail('the call succeeded');
}

/** The Status body of an ApiException (the client keeps it as text or parsed). */
function status(error) {
  return typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
}

async function createAndPage(cores, count, limit) {
  const created = [];
  for (let i = 0; i < count; i++) {
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${PREFIX}${String(i).padStart(3, '0')}` },
      data: { i: String(i) },
    };
    const made = await cores[i % cores.length].createNamespacedConfigMap({ namespace: NAMESPACE, body });
    assert.ok(made instanceof k8s.V1ConfigMap, 'create answers a V1ConfigMap');
    assert.ok(made.metadata.creationTimestamp instanceof Date, 'creationTimestamp parsed as a Date');
    assert.ok(made.metadata.uid, 'a uid');
    created.push(made.metadata.name);
  }

  const names = [];
  const versions = new Set();
  let token;
  let pages = 0;
  for (;;) {
    const page = await cores[pages % cores.length].listNamespacedConfigMap({
      namespace: NAMESPACE,
      limit,
      _continue: token,
    });
    pages += 1;
    assert.ok(page instanceof k8s.V1ConfigMapList, 'list answers a V1ConfigMapList');
    assert.ok(page.items.length <= limit, `page ${pages} has ${page.items.length} > ${limit} items`);
    names.push(...page.items.map((item) => item.metadata.name));
    versions.add(page.metadata.resourceVersion);
    token = page.metadata._continue;
    if (!token) break;
    assert.ok(pages <= count + 10, 'the continue chain does not end');
  }
  const ours = names.filter((name) => name.startsWith(PREFIX)).sort();
  assert.equal(new Set(names).size, names.length, `an object listed twice: ${names}`);
  assert.deepEqual(ours, [...created].sort());
  assert.equal(versions.size, 1, `pages at several resourceVersions: ${[...versions]}`);
  assert.equal(pages, Math.ceil(names.length / limit), `${pages} pages for ${names.length} items`);
  return { pages, items: names.length, resourceVersion: [...versions][0] };
}

async function patchReplaceDelete(cores) {
  const [first, second, third] = [cores[0], cores[1 % cores.length], cores[2 % cores.length]];
  const body = { metadata: { name: PATCHED, labels: { step: 'created' } }, data: { a: '1' } };
  const created = await first.createNamespacedConfigMap({ namespace: NAMESPACE, body });

  const jsonPatched = await second.patchNamespacedConfigMap(
    { name: PATCHED, namespace: NAMESPACE, body: [{ op: 'add', path: '/data/b', value: '2' }] },
    as(k8s.PatchStrategy.JsonPatch),
  );
  assert.deepEqual(jsonPatched.data, { a: '1', b: '2' });
  const merged = await third.patchNamespacedConfigMap(
    { name: PATCHED, namespace: NAMESPACE, body: { data: { a: null, c: '3' } } },
    as(k8s.PatchStrategy.MergePatch),
  );
  assert.deepEqual(merged.data, { b: '2', c: '3' });
  const strategic = await first.patchNamespacedConfigMap(
    { name: PATCHED, namespace: NAMESPACE, body: { metadata: { labels: { step: 'strategic' } } } },
    as(k8s.PatchStrategy.StrategicMergePatch),
  );
  assert.equal(strategic.metadata.labels.step, 'strategic');
  assert.deepEqual(strategic.data, { b: '2', c: '3' });
  assert.ok(
    Number(strategic.metadata.resourceVersion) > Number(created.metadata.resourceVersion),
    'every patch wrote a newer resourceVersion',
  );

  const stale = await rejection(() =>
    third.replaceNamespacedConfigMap({ name: PATCHED, namespace: NAMESPACE, body: created }),
  );
  assert.equal(stale.code, 409);
  assert.equal(status(stale).reason, 'Conflict');

  await third.deleteNamespacedConfigMap({ name: PATCHED, namespace: NAMESPACE });
  const gone = await rejection(() => first.readNamespacedConfigMap({ name: PATCHED, namespace: NAMESPACE }));
  assert.equal(gone.code, 404);
  assert.equal(status(gone).reason, 'NotFound');
  return strategic.metadata.resourceVersion;
}

async function deployment(apps) {
  const labels = { app: DEPLOYMENT };
  const body = {
    metadata: { name: DEPLOYMENT, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    },
  };
  const created = await apps[0].createNamespacedDeployment({ namespace: NAMESPACE, body });
  assert.ok(created instanceof k8s.V1Deployment, 'create answers a V1Deployment');
  assert.equal(created.spec.template.spec.containers[0].image, 'nginx:1.27');
  const scaled = await apps[1 % apps.length].patchNamespacedDeployment(
    { name: DEPLOYMENT, namespace: NAMESPACE, body: { spec: { replicas: 3 } } },
    as(k8s.PatchStrategy.StrategicMergePatch),
  );
  assert.equal(scaled.spec.replicas, 3);
  const listed = await apps[2 % apps.length].listNamespacedDeployment({ namespace: NAMESPACE });
  assert.ok(listed.items.some((item) => item.metadata.name === DEPLOYMENT && item.spec.replicas === 3));
  await apps[0].deleteNamespacedDeployment({ name: DEPLOYMENT, namespace: NAMESPACE });
  const gone = await rejection(() =>
    apps[1 % apps.length].readNamespacedDeployment({ name: DEPLOYMENT, namespace: NAMESPACE }),
  );
  assert.equal(gone.code, 404);
}

async function main([kubeconfig, contexts, count, limit]) {
  const names = contexts.split(',');
  const cores = names.map((context) => client(kubeconfig, context, k8s.CoreV1Api));
  const apps = names.map((context) => client(kubeconfig, context, k8s.AppsV1Api));
  const paging = await createAndPage(cores, Number(count), Number(limit));
  const patched = await patchReplaceDelete(cores);
  await deployment(apps);
  console.log(JSON.stringify({ ...paging, patchedResourceVersion: patched }));
}

await main(process.argv.slice(2));
