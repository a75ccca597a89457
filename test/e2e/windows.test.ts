// Story: the operator says when evacuations may start. A cordon outside the maintenance window
// waits Queued with nothing changed and starts when the window opens; a running evacuation
// finishes after the window closes; a freeze holds a NodeMaintenance; a blocking pod holds its
// own node only; `drainer start --now` starts one node past all of it; a restart keeps waiting
// nodes waiting with their reason. The agents' clock is the test's (moved, never waited for).
import { afterEach, describe, expect, it } from 'vitest';
import { startNode } from '../../src/cli/start.ts';
import { queuePlace, type NodeRecord } from '../../src/core/record/record.ts';
import type { KubeList, NodeMaintenance } from '../../src/kube/types.ts';
import { NM_PATH, nodeMaintenance, rack } from './scenario.ts';
import { startStack, until, type EventObject, type RunningAgent, type Stack } from './stack.ts';

/** A clock the test sets; it runs on at real speed from there. */
function testClock(iso: string) {
  let offset = Date.parse(iso) - Date.now();
  return {
    now: () => new Date(Date.now() + offset),
    set: (at: string) => {
      offset = Date.parse(at) - Date.now();
    },
  };
}

// The plugins keep real time (their deadlines), so the test's days are the coming ones: a Friday
// 15:48 UTC two to eight days ahead; Berlin is UTC+1 or +2 then (the hours below follow it).
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
function comingFriday(): number {
  const d = new Date(Date.now() + 2 * DAY);
  d.setUTCHours(15, 48, 0, 0);
  while (d.getUTCDay() !== 5) d.setTime(d.getTime() + DAY);
  return d.getTime();
}
const FRI = comingFriday();
const berlinOffset =
  Number(
    new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: 'numeric', hourCycle: 'h23' }).format(
      FRI,
    ),
  ) - 15;
const at = (ms: number) => new Date(ms).toISOString();
const FRIDAY = at(FRI);
/** Sat 02:00 Berlin */
const opens = FRI + 8 * HOUR + 12 * 60_000 + (2 - berlinOffset) * HOUR;
const SATURDAY_OPEN = at(opens + 30_000);
/** Sat 06:00 Berlin and 30 s */
const SATURDAY_CLOSED = at(opens + 4 * HOUR + 30_000);
const weekend = { days: ['sat', 'sun'], start: '02:00', end: '06:00', timeZone: 'Europe/Berlin' };

const waiting = (stack: Stack, node: string, kind: string) =>
  until(`${node} waiting (${kind})`, async () => {
    const r = await stack.record(node);
    return r?.phase === 'Queued' && r.waiting?.kind === kind ? r : undefined;
  });

const finished = (stack: Stack, node: string) =>
  until(
    `${node} evacuated`,
    async () => {
      const r = await stack.record(node).catch(() => undefined);
      return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
    },
    30_000,
  );

/** Nothing about the node or its servers changed: no taint, nothing migrated, the service enabled. */
async function untouched(stack: Stack, node: string): Promise<void> {
  const n = await stack.node(node);
  expect(n.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: 'drainer.dev/evacuating' }));
  const os = stack.sandbox.openstack.state;
  for (const v of os.serversOnHost(node)) expect(os.migrateCalls(v.id), v.name).toBe(0);
}

const events = async (stack: Stack, reason: string, namespace = 'default') =>
  (
    await stack.k.request<KubeList<EventObject>>({ path: `/api/v1/namespaces/${namespace}/events` })
  ).items.filter((e) => e.reason === reason);

describe('when evacuations may start (full stack, injected clock)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  /** The stack with one agent per rack node (r1, r2, …), ready; the agents' clock is `clock` if given. */
  async function up(o: {
    nodes: number;
    per: number;
    migrationSeconds?: number;
    fleet: object;
    clock?: { now: () => Date };
  }): Promise<{ s: Stack; agents: RunningAgent[] }> {
    stack = await startStack({
      scenario: rack(o.nodes, o.per, o.migrationSeconds),
      config: { fleet: o.fleet },
      ...(o.clock ? { now: o.clock.now } : {}),
    });
    const s = stack;
    const agents = Array.from({ length: o.nodes }, (_, i) => s.startAgent(`r${i + 1}`));
    await until('agents ready', () => agents.every((x) => x.agent.ready().ready));
    return { s, agents };
  }

  it('a cordon outside the window stays Queued with nothing changed, and starts when the window opens', async () => {
    const clock = testClock(FRIDAY);
    const { s, agents } = await up({ nodes: 1, per: 2, fleet: { maintenanceWindows: [weekend] }, clock });
    const a = agents[0]!;
    await s.cordon('r1');
    const r = await waiting(s, 'r1', 'window');
    expect(r.waiting?.reason).toMatch(
      new RegExp(
        `^outside the maintenance window; opens Sat 02:00 Europe/Berlin \\(in ${10 - berlinOffset} h 1[12] min\\)$`,
      ),
    );
    expect(r.waiting?.until).toBe(at(opens));
    const n = await s.node('r1');
    // the queue's place is on the API server's clock; queuedAt on the agent's (here moved to a Saturday)
    expect(n.metadata.labels?.['drainer.dev/queued']).toBe(String(r.queueStamp));
    await untouched(s, 'r1');
    const told = await until(
      'EvacuationWaiting Event',
      async () => (await events(s, 'EvacuationWaiting'))[0],
    );
    expect(told.message).toMatch(/^outside the maintenance window; opens Sat 02:00 Europe\/Berlin/);
    expect(await a.metrics.text()).toMatch(/drainer_fleet_window_open 0/);
    expect(await a.metrics.text()).toMatch(/drainer_fleet_waiting\{kind="window"\} 1/);

    clock.set(SATURDAY_OPEN);
    const done = await finished(s, 'r1');
    expect(done.phase).toBe('Evacuated');
    expect(done.waiting).toBeUndefined();
    expect(done.queuedAt).toBe(r.queuedAt);
    expect(s.sandbox.openstack.state.serversOnHost('r1')).toEqual([]);
  }, 60_000);

  it('uncordon while held by the window: back in service at once, nothing to undo', async () => {
    const clock = testClock(FRIDAY);
    const { s, agents } = await up({ nodes: 1, per: 2, fleet: { maintenanceWindows: [weekend] }, clock });
    const a = agents[0]!;
    await s.cordon('r1');
    await waiting(s, 'r1', 'window');
    await s.cordon('r1', false);
    await until('r1 back in service', async () => (await s.record('r1')) === undefined);
    const n = await s.node('r1');
    expect(n.metadata.labels?.['drainer.dev/queued']).toBeUndefined();
    expect(n.spec?.unschedulable).toBeFalsy();
    await untouched(s, 'r1');
    expect(await a.metrics.text()).toMatch(/drainer_fleet_waiting\{kind="window"\} 0/);
  }, 60_000);

  it('a running evacuation finishes after the window closes; a node cordoned after it waits for the next one', async () => {
    const clock = testClock(at(opens + 4 * HOUR - 2 * 60_000)); // Sat 05:58 Berlin: two minutes left
    const { s } = await up({
      nodes: 2,
      per: 4,
      migrationSeconds: 20,
      fleet: { maintenanceWindows: [weekend], maxConcurrentEvacuations: 2 },
      clock,
    });
    const os = s.sandbox.openstack.state;
    await s.cordon('r1');
    await until('r1 migrating', () => os.serversOnHost('r1').some((v) => os.migrateCalls(v.id) > 0));
    clock.set(SATURDAY_CLOSED);
    await s.cordon('r2');
    const held = await waiting(s, 'r2', 'window');
    expect(held.waiting?.reason).toMatch(/opens Sun 02:00 Europe\/Berlin \(in (19|20|21) h\)$/);
    expect((await finished(s, 'r1')).phase).toBe('Evacuated');
    expect(os.serversOnHost('r1')).toEqual([]);
    expect((await s.record('r2'))?.phase).toBe('Queued');
    await untouched(s, 'r2');
  }, 60_000);

  it('a freeze holds a NodeMaintenance: Queued, lastError says why; it goes on when the freeze ends', async () => {
    const clock = testClock(FRIDAY);
    const xmas = { from: at(FRI - DAY), to: at(FRI + 2 * DAY), reason: 'christmas freeze' };
    const { s, agents } = await up({ nodes: 1, per: 2, fleet: { freezes: [xmas] }, clock });
    const a = agents[0]!;
    await s.k.request({ method: 'POST', path: NM_PATH, body: nodeMaintenance('nm-r1', 'r1') });
    const r = await waiting(s, 'r1', 'freeze');
    expect(r.waiting?.reason).toBe(
      `frozen (christmas freeze) until ${xmas.to}; opens Sun 15:48 UTC (in 2 d)`,
    );
    const nm = await until('NodeMaintenance says why', async () => {
      const x = await s.k.request<NodeMaintenance>({ path: `${NM_PATH}/nm-r1` });
      return x.status?.lastError ? x : undefined;
    });
    expect(nm.status?.lastError).toBe(r.waiting?.reason);
    expect(nm.status?.phase).toBe('Running');
    // a NodeMaintenance on a schedulable node: not even cordoned while it waits
    expect((await s.node('r1')).spec?.unschedulable).toBeUndefined();
    await untouched(s, 'r1');
    expect(await a.metrics.text()).toMatch(/drainer_fleet_freeze_active 1/);

    clock.set(at(FRI + 2 * DAY + 10_000));
    const end = await finished(s, 'r1');
    expect(end.lastError).toBeUndefined();
    expect(end.phase).toBe('Evacuated');
  }, 60_000);

  it('a blocking pod on a node holds that node only; it starts once the pod is gone', async () => {
    const { s, agents } = await up({
      nodes: 2,
      per: 2,
      fleet: { maxConcurrentEvacuations: 2, blockers: { podSelector: 'drainer.dev/blocks', interval: 1 } },
    });
    const pod = {
      metadata: { name: 'backup-1', namespace: 'default', labels: { 'drainer.dev/blocks': 'backup' } },
      spec: { nodeName: 'r1', containers: [{ name: 'backup', image: 'backup' }] },
    };
    await s.k.request({ method: 'POST', path: '/api/v1/namespaces/default/pods', body: pod });
    await s.cordon('r1');
    await s.cordon('r2');
    const held = await waiting(s, 'r1', 'pods');
    expect(held.waiting?.reason).toBe(
      'blocked by pod on the node matching drainer.dev/blocks: default/backup-1',
    );
    // r2 was cordoned after r1 (behind it in the queue) and goes on: a held node is ahead of nobody
    expect((await finished(s, 'r2')).phase).toBe('Evacuated');
    expect((await s.record('r1'))?.phase).toBe('Queued');
    await untouched(s, 'r1');
    expect(await agents[0]!.metrics.text()).toMatch(/drainer_fleet_blocker_holding\{blocker="pods"\} 1/);

    await s.k.request({
      method: 'DELETE',
      path: '/api/v1/namespaces/default/pods/backup-1',
      query: { gracePeriodSeconds: '0' },
    });
    expect((await finished(s, 'r1')).phase).toBe('Evacuated');
  }, 60_000);

  it('a blocker that begins while a node waits for the slot holds it when its turn comes; the slot is given back', async () => {
    const { s } = await up({
      nodes: 2,
      per: 3,
      migrationSeconds: 20,
      fleet: { maxConcurrentEvacuations: 1, blockers: { podSelector: 'drainer.dev/blocks', interval: 1 } },
    });
    const os = s.sandbox.openstack.state;
    await s.cordon('r1');
    await until('r1 migrating', () => os.serversOnHost('r1').some((v) => os.migrateCalls(v.id) > 0));
    await s.cordon('r2');
    await until('r2 queued for the slot', async () => (await s.record('r2'))?.phase === 'Queued');
    await s.k.request({
      method: 'POST',
      path: '/api/v1/namespaces/default/pods',
      body: {
        metadata: { name: 'rebuild-1', namespace: 'default', labels: { 'drainer.dev/blocks': 'ceph' } },
        spec: { nodeName: 'r2', containers: [{ name: 'rebuild', image: 'rebuild' }] },
      },
    });
    expect((await finished(s, 'r1')).phase).toBe('Evacuated');
    const held = await waiting(s, 'r2', 'pods');
    expect(held.waiting?.reason).toMatch(/default\/rebuild-1$/);
    await until('the slot given back', async () => {
      const l = await s.k.request<{ spec?: { holderIdentity?: string } }>({
        path: '/apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-evacuation-0',
      });
      return l.spec?.holderIdentity === undefined;
    });
    await untouched(s, 'r2');
  }, 60_000);

  it('drainer start --now starts one node past the window, a freeze and a blocker; the others keep waiting', async () => {
    const clock = testClock(FRIDAY);
    const { s } = await up({
      nodes: 2,
      per: 2,
      fleet: {
        maintenanceWindows: [weekend],
        freezes: [{ from: at(FRI - DAY), to: at(FRI + 3 * DAY), reason: 'release week' }],
        maxConcurrentEvacuations: 1,
        blockers: { podSelector: 'drainer.dev/blocks', interval: 1 },
      },
      clock,
    });
    // and a blocking pod on r2 itself
    await s.k.request({
      method: 'POST',
      path: '/api/v1/namespaces/default/pods',
      body: {
        metadata: {
          name: 'backup-r2',
          namespace: 'default',
          labels: { 'drainer.dev/blocks': 'backup' },
          // a Job's pod: the drain evicts it once the evacuation runs
          ownerReferences: [
            { apiVersion: 'batch/v1', kind: 'Job', name: 'backup', uid: 'job-uid-1', controller: true },
          ],
        },
        spec: { nodeName: 'r2', containers: [{ name: 'backup', image: 'backup' }] },
      },
    });
    await s.cordon('r1');
    await waiting(s, 'r1', 'freeze');
    // r2 is not cordoned yet: `start` cordons it, and --now lets it past everything but the budget
    await startNode(s.k, { node: 'r2', now: true, by: 'alice@ops', at: new Date(FRI + 120_000) });
    const done = await finished(s, 'r2');
    expect(done.lastError).toBeUndefined();
    expect(done.phase).toBe('Evacuated');
    expect(done.startedNow).toEqual({ by: 'alice@ops', at: at(FRI + 120_000) });
    // honoured once: the annotation is gone
    expect((await s.node('r2')).metadata.annotations?.['drainer.dev/start-now']).toBeUndefined();
    const told = await until(
      'EvacuationStartedNow Event',
      async () => (await events(s, 'EvacuationStartedNow'))[0],
    );
    expect(told.involvedObject.name).toBe('r2');
    expect(told.message).toContain(`as alice@ops asked at ${at(FRI + 120_000)}`);
    expect((await s.record('r1'))?.waiting?.kind).toBe('freeze');
    await untouched(s, 'r1');
  }, 60_000);

  it('a NodeMaintenance asks to start now with its drainer.dev/start-now annotation', async () => {
    const clock = testClock(FRIDAY);
    const { s } = await up({ nodes: 1, per: 2, fleet: { maintenanceWindows: [weekend] }, clock });
    await s.k.request({ method: 'POST', path: NM_PATH, body: nodeMaintenance('nm-r1', 'r1') });
    await waiting(s, 'r1', 'window');
    await s.k.request({
      method: 'PATCH',
      path: `${NM_PATH}/nm-r1`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'drainer.dev/start-now': 'bob@ops' } } },
    });
    const done = await finished(s, 'r1');
    expect(done.phase).toBe('Evacuated');
    expect(done.startedNow?.by).toBe('bob@ops');
    // the NodeMaintenance's status is written after the record says Evacuated
    const phase = await until('the NodeMaintenance Succeeded', async () => {
      const nm = await s.k.request<NodeMaintenance>({ path: `${NM_PATH}/nm-r1` });
      return nm.status?.phase === 'Succeeded' ? nm.status.phase : undefined;
    });
    expect(phase).toBe('Succeeded');
  }, 60_000);

  it('a restart keeps every waiting node waiting, with its reason and its place', async () => {
    const clock = testClock(FRIDAY);
    const { s, agents } = await up({
      nodes: 2,
      per: 2,
      fleet: { maintenanceWindows: [weekend], maxConcurrentEvacuations: 1 },
      clock,
    });
    const first = agents;
    // r1 queued first (two cordons a few ms apart race between the two agents); its place is stamped
    // on each agent's estimate of the API server's clock, good to half a second, so the order
    // judged at the end is the places'
    await s.cordon('r1');
    const r1Before = await waiting(s, 'r1', 'window');
    await s.cordon('r2');
    const before: NodeRecord[] = [r1Before, await waiting(s, 'r2', 'window')];
    await Promise.all(first.map((x) => x.stop()));
    const again = ['r1', 'r2'].map((n) => s.startAgent(n));
    await until('agents ready again', () => again.every((x) => x.agent.ready().ready));
    // the restarted agents looked again and still wait, each record as it was
    await until('both re-checked', async () =>
      (await Promise.all(again.map((x) => x.metrics.text()))).every((m) =>
        /drainer_fleet_waiting\{kind="window"\} 1/.test(m),
      ),
    );
    for (const [i, n] of ['r1', 'r2'].entries()) {
      const r = await s.record(n);
      expect(r).toMatchObject({
        phase: 'Queued',
        queuedAt: before[i]?.queuedAt,
        queueStamp: before[i]?.queueStamp,
        waiting: before[i]?.waiting,
      });
      await untouched(s, n);
    }
    clock.set(SATURDAY_OPEN);
    const done = [await finished(s, 'r1'), await finished(s, 'r2')];
    expect(done.map((r) => r.phase)).toEqual(['Evacuated', 'Evacuated']);
    // the fair queue kept its order across the restart: the earlier place took the one slot first
    const [early, late] = [0, 1].sort((a, b) => queuePlace(before[a]!)! - queuePlace(before[b]!)!);
    expect(Date.parse(done[early!]!.since)).toBeLessThanOrEqual(Date.parse(done[late!]!.since));
  }, 60_000);
});
