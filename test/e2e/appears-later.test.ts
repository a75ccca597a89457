// Story: KubeVirt is installed after drainer's agent started (issue 52 item 6). The agent looked
// at start and found no KubeVirt CR; once the CR is there, the next cordon moves the node's VMI
// like any other, and the agent's log says once that KubeVirt appeared.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/types.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

const KUBEVIRT = '/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt';

describe('what appears later is picked up (issue 52 item 6)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('KubeVirt installed after the agent started: a cordon then moves its VMI, and the log says it appeared', async () => {
    const s = await startStack({
      scenario: smallWorld({
        servers: 1,
        extra: {
          kubevirt: {
            installed: true,
            namespace: 'kubevirt',
            migrationSeconds: 4,
            vmis: [{ name: 'vm-k', namespace: 'vms', node: 'node-a', evictionStrategy: 'LiveMigrate' }],
          },
        },
      }),
    });
    stack = s;
    // not installed yet when the agent starts (the CR is what says KubeVirt is there)
    const cr = await s.k.request<KubeObject>({ path: KUBEVIRT });
    await s.k.request({ method: 'DELETE', path: KUBEVIRT });
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
    const said = (text: string) => s.logLines.filter((l) => l.includes(text)).length;
    await until('absence said', () => said('KubeVirt not installed') > 0);

    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, ...meta } = cr.metadata;
    await s.k.request({
      method: 'POST',
      path: '/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts',
      body: { ...cr, metadata: meta, status: undefined },
    });
    await s.cordon('node-a');
    const phase = await until(
      'node-a evacuated',
      async () => {
        const p = (await s.record('node-a'))?.phase;
        return p === 'Evacuated' || p === 'Failed' ? p : undefined;
      },
      60_000,
    );
    expect(phase).toBe('Evacuated');
    const vmi = s.sandbox.kube.store.find('virtualmachineinstances.kubevirt.io', 'vms', 'vm-k');
    expect(vmi?.metadata.labels?.['kubevirt.io/nodeName']).toBe('node-b');
    expect(said('KubeVirt is installed now')).toBe(1);
  });
});
