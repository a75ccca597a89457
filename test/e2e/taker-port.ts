// The fleet tools' drains (bench/chaos/takers.ts) against a story's stack: the node's pods, an
// eviction's answer code, the wall clock.
import type { TakerPort } from '../../bench/chaos/takers.ts';
import { isApiError } from '../../src/errors.ts';
import type { KubePod } from '../../src/kube/types.ts';
import type { Stack } from './stack.ts';

export const stackTakerPort = (s: Stack): TakerPort => ({
  pods: async (n) =>
    (
      await s.k.request<{ items: KubePod[] }>({
        path: '/api/v1/pods',
        query: { fieldSelector: `spec.nodeName=${n}` },
      })
    ).items,
  evict: async (p) => {
    const { namespace = '', name = '' } = p.metadata;
    try {
      await s.k.request({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/pods/${name}/eviction`,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
      });
      return 201;
    } catch (err) {
      if (isApiError(err) && err.status !== undefined) return err.status;
      throw err;
    }
  },
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
});
