// Story: a rack is cordoned at once. The cluster-wide budget lets only K nodes evacuate at a
// time (fleet slots are Leases); the others wait Queued in cordon order, take a slot as one is
// given back, and a slot whose holder died passes on once its agent is gone: its host is still
// evacuating (Nova goes on with the migrations it started) while its agent may come back.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeList, KubeNode } from '../../src/kube/types.ts';
import type { KubeLease } from '../../src/kube/lease.ts';
import type { EventObject } from './stack.ts';
import { rack } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';
import { maxEvacuating, phaseTimeline } from './phase-timeline.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases';
// the fleet slots only (each agent also holds its node's Lease, component node-agent)
const SLOTS = `${LEASES}?labelSelector=app.kubernetes.io%2Fcomponent%3Dfleet-slot`;

const evacuated = (stack: Stack, node: string, ms = 30_000) =>
  until(
    `${node} evacuated`,
    async () => {
      const r = await stack.record(node).catch(() => undefined);
      return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
    },
    ms,
  );

describe('fleet budget (full stack, one agent per node)', () => {
  let stack: Stack | undefined;
  const stop = new AbortController();
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('4 nodes cordoned, budget 2: never more than 2 Evacuating, the queued ones in cordon order', async () => {
    stack = await startStack({
      scenario: rack(4, 2),
      config: { fleet: { maxConcurrentEvacuations: 2, leaseDuration: 1 } },
    });
    const s = stack;
    const nodes = ['r1', 'r2', 'r3', 'r4'];
    const agents = nodes.map((n) => s.startAgent(n));
    await until('agents ready', () => agents.every((a) => a.agent.ready().ready));
    const timeline = phaseTimeline(s, stop.signal);
    for (const n of nodes) {
      await s.cordon(n);
      await until(`${n} queued or evacuating`, async () => (await s.record(n))?.phase);
      // the last two queue behind both holders (each agent's Lease watch opens at its first wait)
      if (n === 'r2')
        await until('r1 and r2 took their slots', () =>
          ['r1', 'r2'].every((m) => timeline.some((t) => t.node === m && t.phase === 'Evacuating')),
        );
    }

    const records = await Promise.all(nodes.map((n) => evacuated(s, n)));
    expect(records.map((r) => r.phase)).toEqual(['Evacuated', 'Evacuated', 'Evacuated', 'Evacuated']);
    expect(maxEvacuating(timeline)).toBe(2);
    const started = timeline.filter((t) => t.phase === 'Evacuating').map((t) => t.node);
    expect(started).toEqual(nodes);
    // the label is on exactly while the record says Queued: both change in one Node write
    expect(timeline.filter((t) => t.labelled !== (t.phase === 'Queued'))).toEqual([]);
    // the last two waited Queued first, and no record keeps a slot once done
    for (const n of ['r3', 'r4'])
      expect(timeline.findIndex((t) => t.node === n && t.phase === 'Queued')).toBeGreaterThan(-1);
    expect(records.every((r) => r.queuedAt !== undefined)).toBe(true);
    // the phase is written before the slot is given back (never two in Evacuating on one slot)
    await until('slots given back', async () =>
      (await Promise.all(nodes.map((n) => s.record(n)))).every((r) => r?.slot === undefined),
    );
    const os = s.sandbox.openstack.state;
    // (a server may land on a rack host still queued, and move again when that one's turn comes)
    for (const n of nodes) expect(os.serversOnHost(n), n).toEqual([]);
    const leases = await s.k.request<KubeList<KubeLease>>({ path: SLOTS });
    expect(leases.items.map((l) => l.metadata.name).sort()).toEqual([
      'drainer-evacuation-0',
      'drainer-evacuation-1',
    ]);
    expect(leases.items.every((l) => !l.spec?.holderIdentity)).toBe(true);
    const queued = await s.k.request<KubeList<KubeNode>>({
      path: '/api/v1/nodes',
      query: { labelSelector: 'drainer.dev/queued' },
    });
    expect(queued.items).toEqual([]);
    const events = await s.k.request<KubeList<EventObject>>({ path: '/api/v1/namespaces/default/events' });
    const waits = events.items.filter((e) => e.reason === 'EvacuationQueued');
    expect(waits.map((e) => e.involvedObject.name)).toEqual(expect.arrayContaining(['r3', 'r4']));
    expect(waits[0]?.message).toMatch(/^waiting for a slot: 2 of 2 taken by r\d since \d\d:\d\d, r\d since/);
    const metrics = await agents[3]!.metrics.text();
    expect(metrics).toMatch(/drainer_evacuation_queue_seconds_count 1/);
    // the slots as this agent last saw them while it waited: every one of the 2 taken or free, at least one taken
    const slots = (state: string) =>
      Number(new RegExp(`drainer_fleet_slots\\{state="${state}"\\} (\\d+)`).exec(metrics)?.[1]);
    expect(slots('taken') + slots('free')).toBe(2);
    expect(slots('taken')).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('an agent stopped while holding the slot: the slot passes on once its agent Lease ran out; its node finishes later', async () => {
    stack = await startStack({
      scenario: rack(2, 4, 12),
      config: { fleet: { maxConcurrentEvacuations: 1, leaseDuration: 1, agentLeaseDuration: 2 } },
    });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const first = s.startAgent('r1');
    const other = s.startAgent('r2');
    await until('agents ready', () => first.agent.ready().ready && other.agent.ready().ready);
    await s.cordon('r1');
    await until('r1 migrating', () => os.serversOnHost('r1').some((v) => os.migrateCalls(v.id) > 0));
    await first.stop(); // its slot is neither renewed nor given back (the restarted agent re-takes it)
    const slot = `${LEASES}/drainer-evacuation-0`;
    const held = await s.k.request<KubeLease>({ path: slot });
    const agentLease = await s.k.request<KubeLease>({ path: `${LEASES}/drainer-node-r1` });
    // the holder names the node and the agent instance
    expect(held.spec?.holderIdentity).toBe(`r1/${first.instance}`);
    await s.cordon('r2');
    await until('r2 queued', async () => (await s.record('r2'))?.phase === 'Queued');
    await until('r2 holds the slot', async () => (await s.record('r2'))?.slot === 'drainer-evacuation-0');
    // r1's record says Evacuating on the slot all along: taken only once r1's agent Lease (given back
    // at the stop) had stayed unchanged for its duration (2 s), not when the slot's 1 s ran out
    expect((await s.record('r1'))?.phase).toBe('Evacuating');
    const taken = await s.k.request<KubeLease>({ path: slot });
    expect(taken.spec?.holderIdentity).toBe(`r2/${other.instance}`);
    const agentGoneAt = Date.parse(agentLease.spec?.renewTime ?? '') + 2000;
    expect(Date.parse(taken.spec?.acquireTime ?? '')).toBeGreaterThanOrEqual(agentGoneAt);
    expect(taken.spec?.leaseTransitions).toBe(1);

    // r1's agent comes back while r2 holds the only slot: it waits Queued again (in its old place,
    // its start kept), then finishes
    const before = await s.record('r1');
    const timeline = phaseTimeline(s, stop.signal);
    s.startAgent('r1');
    expect((await evacuated(s, 'r2')).phase).toBe('Evacuated');
    const r1 = await evacuated(s, 'r1');
    expect(r1.phase).toBe('Evacuated');
    expect(timeline.filter((t) => t.node === 'r1').map((t) => t.phase)).toEqual([
      'Evacuating',
      'Queued',
      'Evacuating',
      'Evacuated',
    ]);
    expect(r1).toMatchObject({ queuedAt: before?.queuedAt, since: before?.since });
    for (const v of os.servers()) expect(os.migrateCalls(v.id), v.name).toBe(1);
    expect(os.serversOnHost('r1')).toEqual([]);
  }, 60_000);

  it('uncordon while Queued: leaves the queue and is back at once, nothing changed', async () => {
    stack = await startStack({
      scenario: rack(2, 3, 20),
      config: { fleet: { maxConcurrentEvacuations: 1, leaseDuration: 1 } },
    });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const agents = [s.startAgent('r1'), s.startAgent('r2')];
    await until('agents ready', () => agents.every((a) => a.agent.ready().ready));
    await s.cordon('r1');
    await until('r1 evacuating', async () => (await s.record('r1'))?.phase === 'Evacuating');
    await s.cordon('r2');
    await until('r2 queued', async () => (await s.node('r2')).metadata.labels?.['drainer.dev/queued']);
    expect((await s.record('r2'))?.phase).toBe('Queued');

    await s.cordon('r2', false);
    await until('r2 restored', async () => (await s.record('r2')) === undefined);
    const node = await s.node('r2');
    expect(node.metadata.labels?.['drainer.dev/queued']).toBeUndefined();
    expect(node.spec?.taints ?? []).toEqual([]);
    expect(os.service('r2')).toMatchObject({ status: 'enabled' });
    for (const v of os.serversOnHost('r2')) expect(os.migrateCalls(v.id)).toBe(0);
    expect(os.serversOnHost('r2')).toHaveLength(3);
  }, 60_000);

  it('budget 0: every cordoned node evacuates at once, no Lease is touched', async () => {
    stack = await startStack({
      scenario: rack(2, 2),
      config: { fleet: { maxConcurrentEvacuations: 0 } },
    });
    const s = stack;
    const agents = [s.startAgent('r1'), s.startAgent('r2')];
    await until('agents ready', () => agents.every((a) => a.agent.ready().ready));
    const timeline = phaseTimeline(s, stop.signal);
    await Promise.all([s.cordon('r1'), s.cordon('r2')]);
    await evacuated(s, 'r1');
    await evacuated(s, 'r2');
    expect(maxEvacuating(timeline)).toBe(2);
    expect(timeline.some((t) => t.phase === 'Queued')).toBe(false);
    expect((await s.k.request<KubeList<KubeLease>>({ path: SLOTS })).items).toEqual([]);
  }, 60_000);
});
