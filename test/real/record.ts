// Records how a real kube-apiserver answers the requests the sandbox must now match (issue 29), in the
// format of ../shared/kube-golden (README there): DELETE with options and preconditions, eviction of a
// Pending pod, eviction while a PDB's status is not yet observed, a pod with a finalizer under deletion,
// Pod Security admission of the gate pod, PDB status fields, and a DELETE whose body has no Content-Length
// followed by another request on the same connection. Needs a node that runs pods (the pause image on it).
//
//   DRAINER_REAL_KUBECONFIG=… DRAINER_REAL_NODE=… node test/real/record.ts
//
// Writes test/sandbox/kube/golden-1.26.json (replayed by test/sandbox/kube/golden-1.26.test.ts) and a copy
// in ../shared/kube-golden/exchanges-1.26.json when that directory exists.
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { format, resolveConfig } from 'prettier';
import { gatePod } from '../../src/kube/gate.ts';
import { golden, NS, RESTRICTED_NS, type Recorded, type Step } from './support/golden-steps.ts';
import { apiClient, type Answer, type ApiClient } from './support/api-client.ts';
import { normalize } from './support/golden-normalize.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const OUT = path.join(ROOT, 'test/sandbox/kube/golden-1.26.json');
const SHARED = path.resolve(ROOT, '../shared/kube-golden');

async function waitUntil(api: ApiClient, what: string, path_: string, ok: (o: Recorded['body']) => boolean) {
  for (let i = 0; i < 240; i++) {
    const r = await api.request('GET', path_);
    if (r.status === 200 && ok(r.body)) return;
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The waits a step names before it is sent (the replay performs the same ones). */
async function await_(api: ApiClient, step: Step): Promise<void> {
  for (const w of step.after ?? []) {
    const [kind, name] = w.split(':') as [string, string];
    if (kind === 'running')
      await waitUntil(api, w, `/api/v1/namespaces/${NS}/pods/${name}`, (p) => p.status?.phase === 'Running');
    else if (kind === 'observed')
      await waitUntil(
        api,
        w,
        `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${name}`,
        (b) => b.status?.observedGeneration === b.metadata.generation,
      );
    else if (kind === 'gone')
      for (let i = 0; i < 240; i++) {
        if ((await api.request('GET', `/api/v1/namespaces/${NS}/pods/${name}`)).status === 404) break;
        await sleep(250);
      }
  }
}

async function main(): Promise<void> {
  const kubeconfig = process.env.DRAINER_REAL_KUBECONFIG;
  const node = process.env.DRAINER_REAL_NODE;
  if (!kubeconfig || !node) {
    console.error(
      'record: set DRAINER_REAL_KUBECONFIG and DRAINER_REAL_NODE (a real cluster; docs/real-cluster-tests.md)',
    );
    process.exit(2);
  }
  const api = apiClient(kubeconfig);
  const version = (await api.request('GET', '/version')).body;
  const steps = golden(
    node,
    gatePod(RESTRICTED_NS, node, 'registry.k8s.io/pause:3.10', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      name: `drainer-gate-${node}`,
      uid: '00000000-0000-4000-8000-000000000000',
      controller: true,
    }),
  );
  // a clean start: the namespaces of an earlier recording are deleted first
  for (const ns of [NS, RESTRICTED_NS]) {
    await api.request('DELETE', `/api/v1/namespaces/${ns}`);
    for (let i = 0; i < 240 && (await api.request('GET', `/api/v1/namespaces/${ns}`)).status !== 404; i++)
      await sleep(500);
  }
  const exchanges = [];
  for (const step of steps) {
    await await_(api, step);
    let res = await send(api, step);
    // a race with the disruption controller: the PDB made again and the eviction sent at once, until caught
    for (let n = 1; step.race && !JSON.stringify(res.body).includes(step.race) && n < 30; n++) {
      const before = steps[steps.indexOf(step) - 1]!;
      const name = (before.body as { metadata: { name: string } }).metadata.name;
      await api.request('DELETE', `${before.path}/${name}`);
      await send(api, before);
      res = await send(api, step);
    }
    exchanges.push({
      name: step.name,
      note: step.note,
      ...(step.after ? { after: step.after } : {}),
      request: {
        method: step.method,
        path: step.path,
        contentType: step.contentType ?? (step.body === undefined ? null : 'application/json'),
        body: step.body ?? null,
        ...(step.raw ? { raw: step.raw } : {}),
      },
      response: normalize({
        status: res.status,
        contentType: res.contentType,
        body: res.body,
        ...(res.raw ? { raw: res.raw } : {}),
      }),
    });
    console.log(`${res.status} ${step.name}`);
  }
  for (const ns of [NS, RESTRICTED_NS]) await api.request('DELETE', `/api/v1/namespaces/${ns}`);
  api.close();
  const doc = {
    server: `kube-apiserver ${version.gitVersion} (etcd 3.4, kube-controller-manager, kube-scheduler, a kubelet ${version.gitVersion} with containerd on node ${node}), recorded by test/real/record.ts`,
    placeholders:
      'uid, resourceVersion, timestamps and managedFields are replaced by <...> placeholders; "<uid>" in a request body is the uid of the object at the request path',
    node,
    exchanges,
  };
  // formatted as `npm run lint` checks it
  writeFileSync(OUT, await format(JSON.stringify(doc), { ...(await resolveConfig(OUT)), filepath: OUT }));
  console.log(`wrote ${path.relative(ROOT, OUT)} (${exchanges.length} exchanges)`);
  if (existsSync(SHARED)) {
    copyFileSync(OUT, path.join(SHARED, 'exchanges-1.26.json'));
    console.log(`copied to ${path.join(SHARED, 'exchanges-1.26.json')}`);
  }
}

function send(api: ApiClient, step: Step): Promise<Answer> {
  return step.raw
    ? api.raw(step.raw)
    : bindUid(api, step).then((uid) => api.request(step.method, step.path, step.body, step.contentType, uid));
}

/** "<uid>" in a request body: the uid of the object at the request's path, read just before. */
async function bindUid(api: ApiClient, step: Step): Promise<string | undefined> {
  if (!JSON.stringify(step.body ?? null).includes('"<uid>"')) return undefined;
  return (await api.request('GET', step.path)).body?.metadata?.uid;
}

await main();
