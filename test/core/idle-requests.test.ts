// Story: what one idle agent asks the API server for, built as the daemon builds it, on a cluster
// with the medik8s NodeMaintenance CRD and without the legacy kubevirt one (issue 38). The kubelet
// posts its Node's status every 5 minutes; an operator now and then labels the Node. A thousand
// agents that each listed every NodeMaintenance of both groups (one answering 404) at each of those
// would cost the API server in proportion to the fleet, at every node's every status report.
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { createNodeAgent } from '../../src/core/agent/node-agent.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { drainerCrds, startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { quietLogger } from './fakes.ts';

let server: KubeApiServer | undefined;
const stop = new AbortController();
afterEach(async () => {
  stop.abort();
  await server?.close();
});

const MERGE = 'application/merge-patch+json';

describe('an idle agent on a real wire', () => {
  it("reconciles on a label, not on the kubelet's status reports, and lists no NodeMaintenances to do it", async () => {
    server = await startKubeApiServer({ host: '127.0.0.1', port: 0, crds: false });
    const medik8s = drainerCrds().find(
      (c) => c.metadata.name === 'nodemaintenances.nodemaintenance.medik8s.io',
    );
    server.store.create('customresourcedefinitions.apiextensions.k8s.io', medik8s!);
    server.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'drainer' } });
    server.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
    const admin = createKubeClients({ kubeconfigYaml: server.kubeconfig() });
    const config = configSchema.parse({
      nodeName: 'node-1',
      drainGate: { enabled: false },
      fleet: { maxConcurrentEvacuations: 0 },
    });
    const { agent } = createNodeAgent({
      nodeName: 'node-1',
      config,
      k: createKubeClients({ kubeconfigYaml: server.kubeconfig() }),
      plugins: [],
      log: quietLogger(),
      signal: stop.signal,
    });
    void agent.run();
    await expect.poll(() => agent.ready().ready).toBe(true);
    await agent.idle();
    const from = server.requestLog.length;
    // an absent CRD's watch (Cluster API's Machine) may open a moment after readiness: once per half hour
    const since = () =>
      server!.requestLog
        .slice(from)
        .filter((r) => !r.path.startsWith('/apis/apiextensions.k8s.io/v1/customresourcedefinitions?'))
        .map((r) => `${r.method} ${r.path} ${r.status}`);

    // the kubelet's status report, three times: a new resourceVersion, nothing drainer reads
    for (let i = 0; i < 3; i++) {
      const time = new Date(Date.now() + i * 1000).toISOString();
      await admin.request({
        method: 'PATCH',
        path: '/api/v1/nodes/node-1/status',
        contentType: MERGE,
        body: { status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: time }] } },
      });
    }
    // an operator labels the node: one pass, which reads the Node and takes the NodeMaintenances from
    // the agent's own watch
    await admin.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-1',
      contentType: MERGE,
      body: { metadata: { labels: { rack: 'r7' } } },
    });
    await expect.poll(() => since().filter((r) => r.startsWith('GET /api/v1/nodes/node-1 ')).length).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    await agent.idle();

    expect(since().filter((r) => !r.startsWith('PATCH '))).toEqual(['GET /api/v1/nodes/node-1 200']);
    expect(since().some((r) => r.includes('nodemaintenances'))).toBe(false);
  });
});
