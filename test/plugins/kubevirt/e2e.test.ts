// Story (full stack): node-a carries Nova servers and KubeVirt VMIs. On cordon both plugins run side
// by side; the pod drain starts only once every server and every VMI has left, and it leaves the
// virt-launcher pods of the migrated VMIs alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/sandbox/kube/types.ts';
import { smallWorld } from '../../e2e/scenario.ts';
import { startStack, until, type Stack } from '../../e2e/stack.ts';

const VMI = 'virtualmachineinstances.kubevirt.io';

describe('Nova servers and KubeVirt VMIs on one node (full stack)', () => {
  let stack: Stack;
  /** What was still on node-a when the first pod eviction arrived. */
  let atFirstEviction: { vmis: number; servers: number } | undefined;
  const evicted: KubeObject[] = [];

  beforeAll(async () => {
    stack = await startStack({
      scenario: smallWorld({
        servers: 3,
        extra: {
          kubevirt: {
            installed: true,
            nodeDrainTaintKey: 'example.org/drain',
            migrationSeconds: 12,
            vmis: ['vm-x', 'vm-y', 'vm-z'].map((name) => ({
              name,
              namespace: 'vms',
              node: 'node-a',
              evictionStrategy: 'LiveMigrate',
            })),
          },
        },
      }),
    });
    const { store, evictionHooks } = stack.sandbox.kube;
    evictionHooks.unshift((pod) => {
      atFirstEviction ??= {
        vmis: store.list(VMI, { labelSelector: 'kubevirt.io/nodeName=node-a' }).length,
        servers: stack.sandbox.openstack.state.serversOnHost('node-a').length,
      };
      evicted.push(pod);
      return undefined;
    });
  });
  afterAll(async () => stack?.close());

  it('moves servers and VMIs first, then drains the pods, leaving the launcher pods to KubeVirt', async () => {
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await until('evacuated', async () => {
      const r = await stack.record('node-a');
      return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
    });

    expect(rec.lastError).toBeUndefined();
    expect(rec.phase).toBe('Evacuated');
    expect(rec.outcomes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ plugin: 'nova', succeeded: true, moved: 3 }),
        expect.objectContaining({ plugin: 'kubevirt', succeeded: true, moved: 3 }),
      ]),
    );
    expect(atFirstEviction).toEqual({ vmis: 0, servers: 0 });
    expect(evicted.length).toBeGreaterThan(0);
    expect(evicted.filter((p) => p.metadata.labels?.['kubevirt.io'] === 'virt-launcher')).toEqual([]);
    const node = await stack.node('node-a');
    expect(node.spec?.taints).toContainEqual(expect.objectContaining({ key: 'example.org/drain' }));

    await stack.cordon('node-a', false);
    await until('restored', async () => (await stack.record('node-a')) === undefined);
    const after = await stack.node('node-a');
    expect(after.spec?.taints ?? []).not.toContainEqual(
      expect.objectContaining({ key: 'example.org/drain' }),
    );
  });
});
