// Story: the Kubernetes side misbehaves while drainer works — watches drop, history is compacted,
// and the API answers 503 for a while — and drainer still finishes, without a secret in any log
// line, Event or status.
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeMaintenance } from '../../src/kube/types.ts';
import { NM_PATH, smallWorld } from './scenario.ts';
import { finished, startStack, until, type Stack } from './stack.ts';

describe('Kubernetes faults (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());
  it('recovers from dropped watches, a compacted history and 20 s of API 503s, and finishes', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 3 }) });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await s.cordon('node-a');
    await until('a migration started', () => os.servers().some((v) => os.migrateCalls(v.id) > 0));
    s.sandbox.kube.faults.compactHistory();
    s.sandbox.kube.faults.dropWatches();
    s.sandbox.kube.faults.failRequests({ status: 503, forMs: 20_000 }); // simulated: 1 s at scale 20

    const rec = await finished(s, 'node-a');
    expect(rec.phase).toBe('Evacuated');
    expect(os.serversOnHost('node-a')).toEqual([]);
    for (const v of os.servers()) expect(os.migrateCalls(v.id), v.name).toBe(1);
    expect(s.sandbox.kube.requestLog.some((r) => r.status === 503)).toBe(true);
  });

  it('never writes a secret into a log line, an Event or a NodeMaintenance status', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2, faults: { errorRate: 0.1 } }) });
    const s = stack;
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
    await s.k.request({
      method: 'POST',
      path: NM_PATH,
      body: {
        apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
        kind: 'NodeMaintenance',
        metadata: { name: 'nm' },
        spec: { nodeName: 'node-a' },
      },
    });
    await finished(s, 'node-a');

    const password = s.sandbox.openstack.credentials.admin.password;
    const events = JSON.stringify(await s.k.request({ path: '/api/v1/events' }));
    const nm = JSON.stringify(await s.k.request<NodeMaintenance>({ path: `${NM_PATH}/nm` }));
    const node = JSON.stringify(await s.node('node-a'));
    for (const [where, text] of [
      ['logs', s.logLines.join('')],
      ['events', events],
      ['NodeMaintenance', nm],
      ['node', node],
    ] as const) {
      expect(text.includes(password), `${where} contain the password`).toBe(false);
      expect(/gAAAAA[\w-]{20}/.test(text), `${where} contain a Keystone token`).toBe(false);
    }
  });
});
