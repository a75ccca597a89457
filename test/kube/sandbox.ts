// Starts the project's sandbox API server on loopback with clients pointed at it.
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';

export interface KubeFixture {
  readonly server: KubeApiServer;
  readonly k: KubeClients;
  readonly codes: string[];
  close(): Promise<void>;
}

export async function startFixture(): Promise<KubeFixture> {
  const server = await startKubeApiServer({ host: '127.0.0.1', port: 0 });
  const codes: string[] = [];
  const k = createKubeClients({
    kubeconfigYaml: server.kubeconfig(),
    onApiRequest: (_api, code) => codes.push(code),
  });
  return { server, k, codes, close: () => server.close() };
}

export const node = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: {},
  ...extra,
});

/** A fixture with drainer's namespace and these Nodes: where fleet slots are taken. */
export async function startFleetFixture(nodes: readonly string[]): Promise<KubeFixture> {
  const fx = await startFixture();
  await fx.k.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'drainer' } },
  });
  for (const n of nodes) await fx.k.request({ method: 'POST', path: '/api/v1/nodes', body: node(n) });
  return fx;
}

/** Puts a node in the fleet queue as its agent does: the drainer.dev/queued label, its time. */
export async function queueNode(fx: KubeFixture, n: string, since: number): Promise<void> {
  await fx.k.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${n}`,
    contentType: 'application/merge-patch+json',
    body: { metadata: { labels: { 'drainer.dev/queued': String(since) } } },
  });
}

/** The reads of the fleet queue since request `from`, as label selectors, and whether each came from the cache. */
export function queueReadsSince(
  fx: KubeFixture,
  from: number,
): { selector: string; cached: boolean; limit: string | null }[] {
  return fx.server.requestLog.slice(from).flatMap((r) => {
    const url = new URL(decodeURIComponent(r.path), 'http://x');
    const selector = url.searchParams.get('labelSelector') ?? '';
    if (r.method !== 'GET' || url.pathname !== '/api/v1/nodes' || !selector.includes('drainer.dev/queued'))
      return [];
    return [
      {
        selector,
        cached: url.searchParams.get('resourceVersion') === '0',
        limit: url.searchParams.get('limit'),
      },
    ];
  });
}
