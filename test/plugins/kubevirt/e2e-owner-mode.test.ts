// Stories (full stack, issue 31 loose ends): the KubeVirt side of the per-VM and per-node policy as an
// operator sees it through the agent. A VMI whose owner is asked to move it (drainer.dev/maintenance:
// notify) gets the same MoveRequested Event on the Node and drainer_workloads_awaiting_owner as a Nova
// server; a node in drainer.dev/migration-mode manual gets no taint, eviction or migration from drainer
// (its External VMI included), and its drain gate holds until the test has moved every VMI itself.
import { afterEach, describe, expect, it } from 'vitest';
import { gateName } from '../../../src/kube/gate.ts';
import type { KubePod } from '../../../src/kube/types.ts';
import { smallWorld } from '../../e2e/scenario.ts';
import { finished, nodeEvents, startStack, until, type Stack } from '../../e2e/stack.ts';

const VMI = 'virtualmachineinstances.kubevirt.io';
const VMIM = 'virtualmachineinstancemigrations.kubevirt.io';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** node-a runs these VMIs (no Nova servers), node-b takes them. */
async function start(
  vmis: { name: string; evictionStrategy: string }[],
  config: Record<string, unknown> = {},
  nodeAnnotations: Record<string, string> = {},
) {
  stack = await startStack({
    scenario: smallWorld({
      servers: 0,
      extra: {
        kubevirt: {
          installed: true,
          migrationSeconds: 10,
          vmis: vmis.map((v) => ({ ...v, namespace: 'vms', node: 'node-a' })),
        },
      },
    }),
    config,
  });
  const s = stack;
  if (Object.keys(nodeAnnotations).length)
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: nodeAnnotations } },
    });
  return s;
}

const nodeOf = (s: Stack, name: string) =>
  (s.sandbox.kube.store.get(VMI, 'vms', name).status as { nodeName?: string }).nodeName;

describe('KubeVirt notify and manual mode (full stack)', () => {
  it('notify: the owner of the VMI is asked in a MoveRequested Event and the awaiting-owner metric, then it moves', async () => {
    const s = await start([{ name: 'vm-ask', evictionStrategy: 'LiveMigrate' }], {
      kubevirt: { pollInterval: 0.05, notifyTimeout: 2 },
    });
    s.sandbox.kube.store.patch(VMI, 'vms', 'vm-ask', 'application/merge-patch+json', {
      metadata: { annotations: { 'drainer.dev/maintenance': 'notify' } },
    });
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await s.cordon('node-a');
    const awaiting = await until('the owner is awaited', async () =>
      /^drainer_workloads_awaiting_owner\{plugin="kubevirt"\} 1$/m.test(await agent.metrics.text())
        ? true
        : undefined,
    );
    const rec = await finished(s, 'node-a');

    expect(awaiting).toBe(true);
    expect(rec.phase).toBe('Evacuated');
    expect(nodeOf(s, 'vm-ask')).toBe('node-b');
    expect(await nodeEvents(s, 'node-a', 'MoveRequested')).toEqual([
      expect.stringMatching(/^kubevirt: vms\/vm-ask \(.+\): its owner is asked to move it/),
    ]);
    expect(await agent.metrics.text()).toMatch(/^drainer_workloads_awaiting_owner\{plugin="kubevirt"\} 0$/m);
  }, 30_000);

  it('manual: drainer moves no VMI (External included), the gate holds, and the node is Evacuated once the test has moved them', async () => {
    const s = await start(
      [
        { name: 'vm-a', evictionStrategy: 'LiveMigrate' },
        { name: 'vm-ext', evictionStrategy: 'External' },
      ],
      {},
      { 'drainer.dev/migration-mode': 'manual' },
    );
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
    const { store } = s.sandbox.kube;
    const gatePod = () =>
      s.k
        .request<KubePod>({ path: `/api/v1/namespaces/drainer/pods/${gateName('node-a')}` })
        .catch(() => undefined);

    await s.cordon('node-a');
    await until('evacuating', async () =>
      (await s.record('node-a'))?.phase === 'Evacuating' ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 1000));

    expect((await s.record('node-a'))?.phase).toBe('Evacuating');
    expect(store.list(VMIM, { namespace: 'vms' })).toEqual([]);
    expect((await s.node('node-a')).spec?.taints ?? []).not.toContainEqual(
      expect.objectContaining({ key: 'kubevirt.io/drain' }),
    );
    expect(
      (store.get(VMI, 'vms', 'vm-ext').status as { evacuationNodeName?: string }).evacuationNodeName,
    ).toBeUndefined();
    expect((await gatePod())?.status?.phase).toBe('Running');

    // the operator moves them with their own tools
    for (const name of ['vm-a', 'vm-ext'])
      store.create(VMIM, {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstanceMigration',
        metadata: { name: `by-hand-${name}`, namespace: 'vms' },
        spec: { vmiName: name },
      });
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    expect([nodeOf(s, 'vm-a'), nodeOf(s, 'vm-ext')]).toEqual(['node-b', 'node-b']);
    expect(
      store
        .list(VMIM, { namespace: 'vms' })
        .map((m) => m.metadata.name)
        .sort(),
    ).toEqual(['by-hand-vm-a', 'by-hand-vm-ext']);
    await until('gate released', async () => ((await gatePod()) === undefined ? true : undefined));
  }, 40_000);
});
