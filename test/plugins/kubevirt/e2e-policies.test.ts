// Story (full stack, issue 31): an agent evacuates node-a where KubeVirt (v1.9) runs an External
// VMI next to six LiveMigrate ones, in a cluster where no other controller owns External VMIs
// (kubevirt.external: migrate). drainer migrates the External VMI itself once KubeVirt's eviction
// mark names the node; the others queue in KubeVirt (2 at a time). The drain gate is released only
// when every VMI has left, and the record says each moved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateName } from '../../../src/kube/gate.ts';
import type { KubeObject } from '../../../src/sandbox/kube/types.ts';
import { smallWorld } from '../../e2e/scenario.ts';
import { startStack, until, type Stack } from '../../e2e/stack.ts';

const VMI = 'virtualmachineinstances.kubevirt.io';
const VMIM = 'virtualmachineinstancemigrations.kubevirt.io';
const names = ['vm-ext', ...Array.from({ length: 6 }, (_, i) => `vm-${i + 1}`)];

describe('an External VMI and queued VMIs on one node (full stack, KubeVirt v1.9)', () => {
  let stack: Stack;
  /** The VMIs still on node-a when the gate pod went. */
  let onNodeAtGateRelease: number | undefined;

  beforeAll(async () => {
    stack = await startStack({
      config: { kubevirt: { pollInterval: 0.05, external: 'migrate' } },
      scenario: smallWorld({
        servers: 1,
        extra: {
          kubevirt: {
            installed: true,
            migrationSeconds: 10,
            vmis: names.map((name) => ({
              name,
              namespace: 'vms',
              node: 'node-a',
              evictionStrategy: name === 'vm-ext' ? 'External' : 'LiveMigrate',
            })),
          },
        },
      }),
    });
    const { store } = stack.sandbox.kube;
    store.subscribe('pods', (type, pod: KubeObject) => {
      if (pod.metadata.name !== gateName('node-a')) return;
      if (type === 'DELETED' || pod.metadata.deletionTimestamp)
        onNodeAtGateRelease ??= store.list(VMI, { labelSelector: 'kubevirt.io/nodeName=node-a' }).length;
    });
  });
  afterAll(async () => stack?.close());

  it('migrates the External VMI with its own migration, and releases the gate only when all have left', async () => {
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await until(
      'evacuated',
      async () => {
        const r = await stack.record('node-a');
        return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
      },
      30_000,
    );

    expect(rec.lastError).toBeUndefined();
    expect(rec.phase).toBe('Evacuated');
    expect(rec.outcomes).toContainEqual(
      expect.objectContaining({ plugin: 'kubevirt', succeeded: true, moved: 7 }),
    );
    const { store } = stack.sandbox.kube;
    const vmims = store.list(VMIM, { namespace: 'vms' });
    const ofExt = vmims.filter((m) => (m.spec as { vmiName: string }).vmiName === 'vm-ext');
    expect(ofExt.map((m) => m.metadata.name)).toEqual([expect.stringMatching(/^drainer-evacuation-/)]);
    expect(vmims.filter((m) => m.metadata.name?.startsWith('kubevirt-evacuation-'))).toHaveLength(6);
    for (const name of names)
      expect((store.get(VMI, 'vms', name).status as { nodeName?: string }).nodeName).toBe('node-b');
    expect(stack.sandbox.controllers.migrations.maxInFlightPerNode.get('node-a')).toBe(2);
    await until('gate released', () => onNodeAtGateRelease !== undefined);
    expect(onNodeAtGateRelease).toBe(0);
  }, 40_000);
});
