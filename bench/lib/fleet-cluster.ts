// The fleet-real bench's objects on the API server: drainer's namespace, DaemonSet and the
// NodeMaintenance CRD; N kubelet-less Nodes and the wait for the node lifecycle controller to mark
// them; and the clean-up after a size.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isConflictError, isNotFoundError } from '../../src/errors.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import type { KubeNode, KubeObject } from '../../src/kube/types.ts';
import { sleep, until } from './wait.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const NS = 'drainer';

export async function ensure(k: KubeClients, p: string, body: KubeObject): Promise<void> {
  try {
    await k.request({ method: 'POST', path: p, body });
  } catch (err) {
    if (!isConflictError(err)) throw err; // 409 AlreadyExists
  }
}

export async function setUp(k: KubeClients): Promise<void> {
  await ensure(k, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  // the agents' DaemonSet, as installed, selecting no node (no kubelet runs its pods): the gates'
  // PDBs are owned by it, and a percentage budget would count it
  await ensure(k, `/apis/apps/v1/namespaces/${NS}/daemonsets`, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'drainer', namespace: NS },
    spec: {
      selector: { matchLabels: { app: 'drainer' } },
      template: {
        metadata: { labels: { app: 'drainer' } },
        spec: {
          nodeSelector: { 'drainer.dev/fleet-bench': 'no-such-node' },
          containers: [{ name: 'drainer', image: 'ghcr.io/drainer-dev/drainer:0.1.0' }],
        },
      },
    },
  });
  const crd = readFileSync(
    path.join(REPO, 'daemonset/components/nodemaintenance-crd/crd-nodemaintenance.yaml'),
  );
  const yaml = (await import('js-yaml')).default;
  await ensure(
    k,
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    yaml.load(String(crd)) as KubeObject,
  );
}

/** Runs `fn` over items, `width` at a time. */
export async function inBatches<T>(
  items: readonly T[],
  width: number,
  fn: (t: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

export async function createNodes(k: KubeClients, names: readonly string[]): Promise<void> {
  const now = new Date().toISOString();
  await inBatches(names, 25, (name) =>
    ensure(k, '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'openstack-compute-node': 'enabled', 'kubernetes.io/hostname': name } },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    }),
  );
}

/** Deletes what a size left: its Nodes, and every Lease, gate Pod and PDB in drainer's namespace. */
export async function cleanUp(k: KubeClients, names: readonly string[]): Promise<void> {
  const gone = (err: unknown) => {
    if (!isNotFoundError(err)) throw err;
  };
  await inBatches(names, 25, (n) => k.request({ method: 'DELETE', path: `/api/v1/nodes/${n}` }).catch(gone));
  for (const p of [
    `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
    `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`,
  ])
    await k.request({ method: 'DELETE', path: p });
  // the gate pods carry a finalizer: off first, then they go
  const pods = await k.request<{ items: KubeObject[] }>({ path: `/api/v1/namespaces/${NS}/pods` });
  await inBatches(pods.items, 25, (p) =>
    k
      .request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${NS}/pods/${p.metadata.name}`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { finalizers: null } },
      })
      .catch(gone),
  );
  await k.request({ method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods` });
}

/**
 * The node lifecycle controller marks kubelet-less Nodes' Ready condition Unknown ~40 s after they
 * appear (one status write each; its NoExecute taints then trickle in at its eviction rate limit,
 * 0.1 nodes per second): wait for the status writes, so they are not taken for the agents'.
 */
export async function lifecycleSettled(k: KubeClients, names: readonly string[]): Promise<void> {
  const want = new Set(names);
  const unknown = (n: KubeNode) =>
    (n.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some(
      (c) => c.type === 'Ready' && c.status === 'Unknown',
    );
  // about 2.5 Nodes a second here (its client's QPS limit): 7 minutes for 1,000
  let marked = 0;
  await until(
    'the node lifecycle controller to mark the new Nodes unknown',
    async () => {
      // a loaded API server may not answer one poll: the next one asks again
      const list = await k
        .request<{ items: KubeNode[] }>({ path: '/api/v1/nodes' })
        .catch(() => ({ items: [] }));
      marked = Math.max(
        marked,
        list.items.filter((n) => want.has(n.metadata.name ?? '') && unknown(n)).length,
      );
      return marked === want.size;
    },
    900_000,
    5000,
  ).catch(() =>
    process.stderr.write(`fleet-real: only ${marked} of ${want.size} Nodes marked unknown: going on\n`),
  );
  await sleep(10_000); // and its NoSchedule taint pass
}
