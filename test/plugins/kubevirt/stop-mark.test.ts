// Story (issue 48): every VirtualMachine drainer stops (drainer.dev/maintenance: stop) carries
// drainer's mark, set before the stop: the memory of the stop lives on the VM, not only in the
// Node's record, which a Node deleted and registered again takes along. The agent of the node the
// mark names starts it once the node is in service (its restore, or the stranded check of the Node
// registered again), any agent does when that Node is gone for good, and an owner's own action
// ends drainer's claim: the mark comes off.
import { describe, expect, it } from 'vitest';
import type { StrandedOptions } from '../../../src/core/backends/plugin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { context, NS, restoreCtx, until, worldPerTest, type World } from './harness.ts';
import { instance, running, startVm, strategy, virtualMachine, VM } from './vms.ts';

const world = worldPerTest();

const MARK = 'drainer.dev/stopped';
const vmOf = (w: World, name: string) => w.sb.kube.store.get(VM, NS, name);
const markOf = (w: World, name: string) => {
  const text = vmOf(w, name).metadata.annotations?.[MARK];
  return text === undefined ? undefined : (JSON.parse(text) as Record<string, string>);
};
const labelled = (w: World, name: string) => vmOf(w, name).metadata.labels?.[MARK];

const inService = (): StrandedOptions => ({
  signal: AbortSignal.timeout(30_000),
  inService: true,
  dryRun: false,
  log: silentLogger(),
});

/** `kubectl delete node`, and the kubelet registers it again (a new uid, no record). */
function registerAgain(w: World, node: string) {
  const old = w.sb.kube.store.get('nodes', undefined, node);
  w.sb.kube.store.delete('nodes', undefined, node);
  w.sb.kube.store.create('nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: node, labels: old.metadata.labels ?? {} },
    spec: {},
    status: old.status,
  });
}

describe('KubeVirt plugin, the stop mark on a VirtualMachine', () => {
  it('is set before the stop, naming the node, the run strategy and the VMI it stops', async () => {
    const w = await world({});
    const vmi = await virtualMachine(w, 'vm-halt', 'Always', 1);

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(markOf(w, 'vm-halt')).toEqual({
      node: 'node-1',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      runStrategy: 'Always',
      vmi,
    });
    expect(labelled(w, 'vm-halt')).toBe('true');
    const writes = w.sb.kube.requestLog
      .filter((r) => r.method !== 'GET' && r.path.includes('virtualmachines/vm-halt'))
      .map((r) => `${r.method} ${r.path.replace(/^.*virtualmachines\//, '')}`);
    expect(writes.slice(0, 2)).toEqual(['PATCH vm-halt', 'PUT vm-halt/stop']);
  });

  it('outlives a Node deleted and registered again: its stranded check starts the VM and takes the mark off', async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-halt', 'Always', 1);
    await w.plugin().evacuate({ name: 'node-1' }, context());
    expect(instance(w, 'vm-halt')).toBeUndefined();

    registerAgain(w, 'node-1'); // the record went with the Node
    const change = await w.plugin().stranded!({ name: 'node-1' }, inService());

    expect(change).toEqual({
      what: 'VirtualMachine(s) drainer stopped: vms/vm-halt',
      reason: expect.stringMatching(/^annotation drainer\.dev\/stopped: stopped for node node-1 at /),
      restored: true,
    });
    await until('vm-halt runs again', () => running(w, 'vm-halt'));
    expect(strategy(w, 'vm-halt')).toBe('Always');
    expect(markOf(w, 'vm-halt')).toBeUndefined();
    expect(labelled(w, 'vm-halt')).toBeUndefined();
  }, 20_000);

  it('is only told while the node is not in service, and left for later', async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-halt', 'Always', 1);
    await w.plugin().evacuate({ name: 'node-1' }, context());

    const change = await w.plugin().stranded!({ name: 'node-1' }, { ...inService(), inService: false });

    expect(change).toMatchObject({ what: 'VirtualMachine(s) drainer stopped: vms/vm-halt', restored: false });
    expect(instance(w, 'vm-halt')).toBeUndefined();
    expect(markOf(w, 'vm-halt')).toMatchObject({ node: 'node-1' });
  });

  it("is started by another node's agent when the node it names is gone for good", async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-halt', 'Always', 1);
    await w.plugin().evacuate({ name: 'node-1' }, context());
    w.sb.kube.store.delete('nodes', undefined, 'node-1'); // Cluster API deleted the Machine

    expect(await w.plugin().stranded!({ name: 'node-3' }, inService())).toMatchObject({ restored: true });
    await until('vm-halt runs again', () => running(w, 'vm-halt'));
    expect(markOf(w, 'vm-halt')).toBeUndefined();
  }, 20_000);

  it("is not another live node's to start", async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-halt', 'Always', 1);
    await w.plugin().evacuate({ name: 'node-1' }, context());

    expect(await w.plugin().stranded!({ name: 'node-2' }, inService())).toBeUndefined();
    expect(instance(w, 'vm-halt')).toBeUndefined();
    expect(markOf(w, 'vm-halt')).toMatchObject({ node: 'node-1' });
  });

  it('comes off when its owner started the VM first: restore leaves it as the owner has it', async () => {
    const w = await world({});
    const first = await virtualMachine(w, 'vm-halt', 'Always', 1);
    const ctx = context();
    await w.plugin().evacuate({ name: 'node-1' }, ctx);

    await startVm(w, 'vm-halt'); // its owner's `virtctl start`
    const second = await until('the owner started it', () =>
      running(w, 'vm-halt') ? instance(w, 'vm-halt') : undefined,
    );
    await w.plugin().restore({ name: 'node-1' }, restoreCtx(ctx));

    expect(second.metadata.uid).not.toBe(first);
    expect(instance(w, 'vm-halt')?.metadata.uid).toBe(second.metadata.uid);
    expect(markOf(w, 'vm-halt')).toBeUndefined();
    expect(ctx.saved()).toEqual({});
  }, 20_000);

  it('comes off once restore has started the VM again', async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-halt', 'Always', 1);
    const ctx = context();
    await w.plugin().evacuate({ name: 'node-1' }, ctx);

    await w.plugin().restore({ name: 'node-1' }, restoreCtx(ctx));

    await until('vm-halt runs again', () => running(w, 'vm-halt'));
    expect(markOf(w, 'vm-halt')).toBeUndefined();
    expect(labelled(w, 'vm-halt')).toBeUndefined();
  }, 20_000);
});
