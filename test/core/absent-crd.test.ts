// Story: a cluster without the NodeMaintenance CRDs (most clusters), where an operator installs
// medik8s NMO after drainer. Each agent watches the absent CRDs by name, so a NodeMaintenance created
// right after the CRD is seen without a restart and without waiting; while they are absent, that
// watch is one request per half hour. An agent whose ClusterRole cannot read CRDs (an older install)
// looks for the absent groups again every 10 minutes of its own time, not every minute: with a
// thousand agents, that look is most of what an idle fleet asks the API server for.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { kubeWatchSources } from '../../src/core/cluster/kube-sources.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { quietLogger } from './fakes.ts';

let server: KubeApiServer | undefined;
let stop = new AbortController();
afterEach(async () => {
  stop.abort();
  vi.useRealTimers();
  await server?.close();
  stop = new AbortController();
});

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 50));
};

const NMO_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'nodemaintenances.nodemaintenance.medik8s.io' },
  spec: {
    group: 'nodemaintenance.medik8s.io',
    scope: 'Cluster',
    names: { plural: 'nodemaintenances', singular: 'nodemaintenance', kind: 'NodeMaintenance' },
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('an agent on a cluster without the NodeMaintenance CRDs', () => {
  it('sees the CRD installed later at once, and the NodeMaintenance made right after it', async () => {
    server = await startKubeApiServer({ host: '127.0.0.1', port: 0, crds: false });
    const k = createKubeClients({ kubeconfigYaml: server.kubeconfig() });
    const seen: string[] = [];
    let synced = false;
    void kubeWatchSources({ k, nodeName: 'node-1', log: quietLogger(), crdSettleMs: 50 }).watchMaintenances({
      signal: stop.signal,
      onEvent: (type, nm) => seen.push(`${type} ${nm.metadata?.name}`),
      onSynced: () => (synced = true),
    });
    await vi.waitFor(() => expect(synced).toBe(true)); // an absent group never holds readiness back
    // both absent CRDs are read by name (what a ClusterRole's resourceNames can allow), then watched
    await vi.waitFor(() =>
      expect(
        server!.requestLog
          .filter((r) => r.path.startsWith('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/'))
          .map((r) => `${r.status} ${r.path.split('/').pop()}`)
          .sort(),
      ).toEqual([
        '404 nodemaintenances.nodemaintenance.kubevirt.io',
        '404 nodemaintenances.nodemaintenance.medik8s.io',
      ]),
    );

    await k.request({
      method: 'POST',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      body: NMO_CRD,
    });
    // the operator's first NodeMaintenance, created as soon as the CRD is there, on the agent's node
    await vi.waitFor(async () =>
      k.request({
        method: 'POST',
        path: '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances',
        body: { metadata: { name: 'nm-1' }, spec: { nodeName: 'node-1', reason: 'installed after drainer' } },
      }),
    );
    await vi.waitFor(() => expect(seen).toContain('ADDED nm-1'), { timeout: 5000 });
  });

  it('without the right to read CRDs, looks for the absent groups again after 10 minutes, not every minute', async () => {
    server = await startKubeApiServer({ host: '127.0.0.1', port: 0, crds: false });
    // an older ClusterRole: no rule for CustomResourceDefinitions
    server.faults.failRequests({ status: 403, forMs: 3_600_000, match: /customresourcedefinitions/ });
    const k = createKubeClients({ kubeconfigYaml: server.kubeconfig() });
    const looks = () => server!.requestLog.filter((r) => r.path.startsWith('/apis/nodemaintenance.')).length;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    let synced = false;
    void kubeWatchSources({ k, nodeName: 'node-1', log: quietLogger() }).watchMaintenances({
      signal: stop.signal,
      onEvent: () => undefined,
      onSynced: () => (synced = true),
    });
    await vi.waitFor(() => expect(looks()).toBe(2)); // the first look: both groups absent
    await vi.waitFor(() => expect(synced).toBe(true)); // an absent group never holds readiness back

    await vi.advanceTimersByTimeAsync(5 * 60_000);
    await settle();
    expect(looks()).toBe(2);

    await vi.advanceTimersByTimeAsync(5 * 60_000 + 1000);
    await vi.waitFor(() => expect(looks()).toBe(4));
  });
});
