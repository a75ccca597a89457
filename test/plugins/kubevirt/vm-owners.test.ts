// Story (issue 35): VirtualMachines take time and have owners. KubeVirt's stop keeps the VMI
// Running through its termination grace period and answers `start` with 409 until it is final; a
// VM's run strategy is its owner's choice; an owner may act at any moment. drainer tracks its own
// stop to its end, gives each VM back as it was, and never takes its owner's doing for its own.
import { describe, expect, it } from 'vitest';
import {
  byName,
  context,
  migrationsOf,
  NS,
  phaseOf,
  restoreCtx,
  until,
  vm,
  VMI,
  worldPerTest,
} from './harness.ts';
import { instance, KEY, running, strategy, virtualMachine, VM } from './vms.ts';

const world = worldPerTest();

describe('KubeVirt plugin, VMs that take time and have owners', () => {
  it('an uncordon while its stop is under way: restore waits for the VMI to be final, then starts it', async () => {
    const w = await world({ vmis: [vm('vm-live')] });
    const first = await virtualMachine(w, 'vm-halt', 'Always', 120);
    const ctx = context({ signal: AbortSignal.timeout(60_000) });
    const cancel = new AbortController();

    const evacuation = w.plugin().evacuate({ name: 'node-1' }, { ...ctx, signal: cancel.signal });
    await until('the stop is under way', () => instance(w, 'vm-halt')?.metadata.deletionTimestamp);
    cancel.abort(); // the node is uncordoned mid-stop
    await evacuation;
    expect(phaseOf(w, 'vm-halt')).toBe('Running'); // still within its grace period
    expect(ctx.saved()).toMatchObject({
      stopped: [{ namespace: NS, name: 'vm-halt', runStrategy: 'Always' }],
    });

    await w.plugin().restore({ name: 'node-1' }, restoreCtx(ctx));

    const now = instance(w, 'vm-halt');
    expect(now?.metadata.uid).not.toBe(first);
    expect(now?.metadata.deletionTimestamp).toBeUndefined();
    expect(strategy(w, 'vm-halt')).toBe('Always');
    expect(ctx.saved()).toEqual({});
    await until('vm-halt runs again', () => running(w, 'vm-halt'));
  }, 20_000);

  it('gives each VM its run strategy back: Once stays Once, Manual and RerunOnFailure keep theirs', async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-once', 'Once');
    await virtualMachine(w, 'vm-manual', 'Manual');
    await virtualMachine(w, 'vm-rerun', 'RerunOnFailure');
    const ctx = context();

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(strategy(w, 'vm-once')).toBe('Halted');
    expect((ctx.saved()?.stopped as { runStrategy: string }[]).map((s) => s.runStrategy).sort()).toEqual([
      'Manual',
      'Once',
      'RerunOnFailure',
    ]);

    await w.plugin().restore({ name: 'node-1' }, restoreCtx(ctx));

    for (const [name, was] of [
      ['vm-once', 'Once'],
      ['vm-manual', 'Manual'],
      ['vm-rerun', 'RerunOnFailure'],
    ] as const) {
      expect(strategy(w, name)).toBe(was);
      await until(`${name} runs again`, () => running(w, name));
    }
    expect(ctx.saved()).toEqual({});
  }, 20_000);

  it("a VM its owner deletes mid-stop is reported as the owner's, and restore starts nothing", async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-halt', 'Always', 90);
    const ctx = context();

    const evacuation = w.plugin().evacuate({ name: 'node-1' }, ctx);
    await until('the stop is under way', () => instance(w, 'vm-halt')?.metadata.deletionTimestamp);
    w.sb.kube.store.delete(VM, NS, 'vm-halt');
    const outcome = await evacuation;

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-halt']).toMatchObject({
      state: 'skipped',
      message: 'deleted by its owner (VirtualMachine vm-halt); not started again on restore',
    });
    expect(ctx.saved()).toEqual({});
  }, 20_000);

  it('an owner who makes a stopped VM Manual keeps it stopped: restore leaves it as its owner set it', async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-halt', 'Always');
    const ctx = context();
    await w.plugin().evacuate({ name: 'node-1' }, ctx);
    w.sb.kube.store.patch(VM, NS, 'vm-halt', 'application/merge-patch+json', {
      spec: { runStrategy: 'Manual' },
    });

    await w.plugin().restore({ name: 'node-1' }, restoreCtx(ctx));
    await new Promise((r) => setTimeout(r, 200)); // 10 s of scenario time

    expect(instance(w, 'vm-halt')).toBeUndefined();
    expect(strategy(w, 'vm-halt')).toBe('Manual');
    expect(ctx.saved()).toEqual({});
  }, 20_000);

  it('a stop recorded but cut short before KubeVirt got it: restore finds nothing to undo', async () => {
    const w = await world({});
    const uid = await virtualMachine(w, 'vm-halt', 'Always');
    const ctx = context({
      record: { stopped: [{ namespace: NS, name: 'vm-halt', runStrategy: 'Always', vmi: uid }] },
    });

    await w.plugin().restore({ name: 'node-1' }, restoreCtx(ctx));

    expect(instance(w, 'vm-halt')?.metadata.uid).toBe(uid);
    expect(strategy(w, 'vm-halt')).toBe('Always');
    expect(ctx.saved()).toEqual({});
  });

  it("notify: the owner's clock is in the record, so a restarted evacuation does not give the whole timeout again", async () => {
    const w = await world({ vmis: [vm('vm-owned', { migrationSeconds: 4 })] });
    w.sb.kube.store.patch(VMI, NS, 'vm-owned', 'application/merge-patch+json', {
      metadata: { annotations: { [KEY]: 'notify' } },
    });
    const asked = w.sb.clock.now();
    const first = new AbortController();
    const ctx = context();
    const run = w
      .plugin({ notifyTimeout: 120 })
      .evacuate({ name: 'node-1' }, { ...ctx, signal: first.signal });
    await w.sb.clock.sleep(60_000);
    first.abort(); // the agent restarts
    await run;

    const outcome = await w
      .plugin({ notifyTimeout: 120 })
      .evacuate({ name: 'node-1' }, context({ record: ctx.saved() }));

    expect(outcome.succeeded).toBe(true);
    const [m] = migrationsOf(w, 'vm-owned');
    // objects carry real time: the store keeps each creation's moment on the scenario clock
    const at = w.sb.kube.store.stamps.metaMoment(m!, 'creationTimestamp') - asked;
    expect(at).toBeGreaterThanOrEqual(119_000);
    expect(at).toBeLessThan(150_000);
  }, 20_000);
});
