// Story (issue 31, loose ends): KubeVirt's per-VM and per-node policy reach the operator the way
// Nova's do. A VMI whose owner is asked to move it (drainer.dev/maintenance: notify) is reported
// as waiting for its owner, which the core turns into a MoveRequested Event and the awaiting-owner
// metric; `drainer plan` names each VMI's way out and why; and a node in migration-mode manual
// gets no taint, no eviction and no migration from drainer (External VMIs included) while its
// evacuation waits until someone else has moved every VMI off it.
import { describe, expect, it } from 'vitest';
import { ProgressEvents } from '../../../src/core/backends/progress-events.ts';
import {
  byName,
  context,
  evictionPosts,
  migrationsOf,
  moveByHand,
  nodeOf,
  NS,
  taints,
  until,
  vm,
  VMI,
  worldPerTest,
  type World,
} from './harness.ts';

const world = worldPerTest();

const KEY = 'drainer.dev/maintenance';
const annotate = (w: World, name: string, value: string) =>
  w.sb.kube.store.patch(VMI, NS, name, 'application/merge-patch+json', {
    metadata: { annotations: { [KEY]: value } },
  });

describe('KubeVirt plugin, notify as the core sees it', () => {
  it('a VMI waiting for its owner is reported as notify, so the core asks its owner in a MoveRequested Event', async () => {
    const w = await world({ vmis: [vm('vm-owned'), vm('vm-live')] });
    annotate(w, 'vm-owned', 'notify');
    const ctx = context();
    const events: string[] = [];
    const told = new ProgressEvents((type, reason, message) => events.push(`${type} ${reason} ${message}`));

    const outcome = await w.plugin({ notifyTimeout: 60 }).evacuate({ name: 'node-1' }, ctx);
    for (const r of ctx.reports) told.report('kubevirt', r);

    expect(outcome.succeeded).toBe(true);
    const waiting = ctx.reports.flat().filter((x) => x.name === 'vms/vm-owned' && x.action === 'notify');
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.every((x) => x.state === 'pending')).toBe(true);
    expect(waiting[0]!.message).toMatch(
      /^its owner is asked to move it \(drainer\.dev\/maintenance=notify\); drainer has it live-migrated in \d+s \(kubevirt\.notifyTimeout\)$/,
    );
    expect(events.filter((e) => e.includes('MoveRequested'))).toEqual([
      expect.stringMatching(/^Warning MoveRequested kubevirt: vms\/vm-owned \(.+\): its owner is asked/),
    ]);
    // once the owner's time is up it is a live migration like any other
    expect(byName(outcome)['vms/vm-owned']).toMatchObject({ state: 'succeeded', action: 'live-migrate' });
  });
});

describe('KubeVirt plugin, the plan says why', () => {
  it('each VMI carries its way out and where it came from', async () => {
    const w = await world({
      vmis: [
        vm('vm-live'),
        vm('vm-owned'),
        vm('vm-halt'),
        vm('vm-none', { evictionStrategy: 'None' }),
        vm('vm-ext', { evictionStrategy: 'External' }),
      ],
    });
    annotate(w, 'vm-owned', 'notify');
    annotate(w, 'vm-halt', 'stop');

    const plan = await w.plugin({ notifyTimeout: 90 }).plan({ name: 'node-1' }, new AbortController().signal);

    const why = Object.fromEntries(plan.workloads.map((x) => [x.name, [x.action, x.why]]));
    expect(why).toEqual({
      'vms/vm-live': ['live-migrate', 'evictionStrategy LiveMigrate: KubeVirt live-migrates it'],
      'vms/vm-owned': [
        'notify',
        'VirtualMachineInstance annotation drainer.dev/maintenance=notify: its owner is asked to move it; after kubevirt.notifyTimeout (90s) drainer has it live-migrated',
      ],
      'vms/vm-halt': [
        'shutdown',
        'VirtualMachineInstance annotation drainer.dev/maintenance=stop: drainer stops it on the node and starts it again on restore',
      ],
      'vms/vm-none': ['shutdown', 'evictionStrategy None: left to the pod drain, which stops it'],
      'vms/vm-ext': [
        'external',
        'evictionStrategy External (kubevirt.external: mark): drainer has KubeVirt mark it; its own controller takes it off the node, and the drain waits for that',
      ],
    });
  });
});

describe('KubeVirt plugin, node migration-mode manual', () => {
  it('the plan names every VMI as moved by someone else', async () => {
    const w = await world({ vmis: [vm('vm-a'), vm('vm-ext', { evictionStrategy: 'External' })] });

    const plan = await w.plugin().plan({ name: 'node-1', mode: 'manual' }, new AbortController().signal);

    expect(plan.workloads.map((x) => [x.name, x.action, x.why])).toEqual([
      [
        'vms/vm-a',
        'external',
        'node node-1 drainer.dev/migration-mode=manual: moved by someone else; the drain waits until no VMI is left on the node',
      ],
      [
        'vms/vm-ext',
        'external',
        'node node-1 drainer.dev/migration-mode=manual: moved by someone else; the drain waits until no VMI is left on the node',
      ],
    ]);
  });

  it('drainer moves nothing, External VMIs included, and waits until someone else has emptied the node', async () => {
    const w = await world({ vmis: [vm('vm-a'), vm('vm-ext', { evictionStrategy: 'External' })] });
    const ctx = context();

    const evacuation = w.plugin().evacuate({ name: 'node-1', mode: 'manual' }, ctx);
    await until('the wait is reported', () =>
      ctx.reports.some((r) => r.length === 2 && r.every((x) => x.state === 'pending')),
    );
    await w.sb.clock.sleep(30_000); // a while of polling: still nothing from drainer
    expect(taints(w)).toEqual([]);
    expect(evictionPosts(w)).toEqual([]);
    expect([...migrationsOf(w, 'vm-a'), ...migrationsOf(w, 'vm-ext')]).toEqual([]);

    moveByHand(w, 'vm-a');
    moveByHand(w, 'vm-ext');
    const outcome = await evacuation;

    expect(outcome.succeeded).toBe(true);
    expect(outcome.message).toBe(
      'node node-1 drainer.dev/migration-mode=manual: no VMI left; 2 moved by someone else',
    );
    expect(outcome.workloads.map((x) => [x.name, x.state, x.action])).toEqual([
      ['vms/vm-a', 'succeeded', 'external'],
      ['vms/vm-ext', 'succeeded', 'external'],
    ]);
    expect(nodeOf(w, 'vm-a')).not.toBe('node-1');
    expect(nodeOf(w, 'vm-ext')).not.toBe('node-1');
    expect([...migrationsOf(w, 'vm-a'), ...migrationsOf(w, 'vm-ext')].map((m) => m.metadata.name)).toEqual([
      'by-hand-vm-a',
      'by-hand-vm-ext',
    ]);
    expect(evictionPosts(w)).toEqual([]);
  });
});
