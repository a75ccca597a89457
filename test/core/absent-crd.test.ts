// Story: a cluster without the NodeMaintenance CRDs (most clusters). Each agent looks for an absent
// group again now and then, so a CRD installed later is watched without a restart; with a thousand
// agents, that look is most of what an idle fleet asks the API server for. It comes every 10 minutes
// of the agent's time, not every minute.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { kubeWatchSources } from '../../src/core/cluster/kube-sources.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { quietLogger } from './fakes.ts';

let server: KubeApiServer | undefined;
const stop = new AbortController();
afterEach(async () => {
  stop.abort();
  vi.useRealTimers();
  await server?.close();
});

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 50));
};

describe('an agent on a cluster without the NodeMaintenance CRDs', () => {
  it('looks for the absent groups again after 10 minutes, not every minute', async () => {
    server = await startKubeApiServer({ host: '127.0.0.1', port: 0, crds: false });
    const k = createKubeClients({ kubeconfigYaml: server.kubeconfig() });
    const looks = () => server!.requestLog.filter((r) => r.path.includes('/nodemaintenances')).length;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    let synced = false;
    void kubeWatchSources({ k, nodeName: 'node-1', log: quietLogger() }).watchMaintenances({
      signal: stop.signal,
      onEvent: () => undefined,
      onSynced: () => (synced = true),
    });
    await vi.waitFor(() => expect(looks()).toBe(2)); // the first look: both groups absent
    expect(synced).toBe(true); // an absent group never holds readiness back

    await vi.advanceTimersByTimeAsync(5 * 60_000);
    await settle();
    expect(looks()).toBe(2);

    await vi.advanceTimersByTimeAsync(5 * 60_000 + 1000);
    await vi.waitFor(() => expect(looks()).toBe(4));
  });
});
