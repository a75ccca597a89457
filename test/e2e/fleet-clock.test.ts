// Story: the agents' clocks disagree. r2's machine runs 30 s ahead. With one slot taken, r2 is
// cordoned, then r3 a moment later: r2 was first in, and goes first, because the queue is ordered
// by the API server's clock (the Date of its answers), not by what each agent's clock says
// (issue 48 item 5). By its own clock r2 queued 30 s after r3 and would have gone last.
// And the phases agree with the slots: a pass that ends on an API error after it took the slot
// leaves Evacuating (Queued, to resume in its place) before the slot goes to the next node, so at
// no moment do more records say Evacuating than there are slots.
import { afterEach, describe, expect, it } from 'vitest';
import { rack } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';
import { maxEvacuating, phaseTimeline } from './phase-timeline.ts';

const queuedLabel = async (s: Stack, node: string) =>
  Number((await s.node(node)).metadata.labels?.['drainer.dev/queued']);

const allEvacuated = (s: Stack, nodes: readonly string[]) =>
  until(
    'all evacuated',
    async () => (await Promise.all(nodes.map((n) => s.record(n)))).every((r) => r?.phase === 'Evacuated'),
    60_000,
  );

describe('fleet queue: one clock for every agent, one slot for each Evacuating record', () => {
  let stack: Stack | undefined;
  let stop = new AbortController();
  afterEach(async () => {
    stop.abort();
    stop = new AbortController();
    await stack?.close();
    stack = undefined;
  });

  /** A budget of 1 over `racked` nodes, each with its agent (`clocks`: an agent's own clock). */
  async function budgetOfOne(
    racked: number,
    migrationSeconds: number,
    clocks: Record<string, () => Date> = {},
  ) {
    stack = await startStack({
      scenario: rack(racked, 2, migrationSeconds),
      config: { fleet: { maxConcurrentEvacuations: 1, leaseDuration: 1 } },
    });
    const s = stack;
    const nodes = Array.from({ length: racked }, (_, i) => `r${i + 1}`);
    const agents = nodes.map((n) => s.startAgent(n, {}, clocks[n] ? { now: clocks[n] } : {}));
    await until('agents ready', () => agents.every((a) => a.agent.ready().ready));
    return { s, nodes, timeline: phaseTimeline(s, stop.signal) };
  }

  it("first in, first out by the API server's time, whatever the agents' clocks say", async () => {
    const ahead = () => new Date(Date.now() + 30_000);
    const { s, nodes, timeline } = await budgetOfOne(3, 60, { r2: ahead });

    await s.cordon('r1');
    await until('r1 holds the slot', async () => (await s.record('r1'))?.phase === 'Evacuating');
    await s.cordon('r2');
    await until('r2 queued', async () => (await s.record('r2'))?.phase === 'Queued');
    // the API server's Date header has whole seconds: nodes queued within one have no order to keep
    // (rules/fifo.ts), so r3 comes two seconds later
    const r2At = await queuedLabel(s, 'r2');
    await until('two seconds on', () => Date.now() > r2At + 2_000);
    await s.cordon('r3');
    await until('r3 queued', async () => (await s.record('r3'))?.phase === 'Queued');

    // by its own clock r2 queued 30 s after r3; its record keeps that, the queue does not go by it
    const [r2, r3] = [await s.record('r2'), await s.record('r3')];
    expect(Date.parse(r2?.queuedAt ?? '')).toBeGreaterThan(Date.parse(r3?.queuedAt ?? ''));
    expect(await queuedLabel(s, 'r2')).toBeLessThan(await queuedLabel(s, 'r3'));
    // the API server's time, as the agents' transports keep it: within a second of the real one
    expect(Math.abs((await queuedLabel(s, 'r2')) - Date.now())).toBeLessThan(5_000);

    await allEvacuated(s, nodes);
    expect(timeline.filter((t) => t.phase === 'Evacuating').map((t) => t.node)).toEqual(['r1', 'r2', 'r3']);
    expect(maxEvacuating(timeline)).toBe(1);
  }, 90_000);

  it('a pass that ends on an API error leaves Evacuating before its slot goes to the next node', async () => {
    const { s, nodes, timeline } = await budgetOfOne(2, 40);
    const os = s.sandbox.openstack.state;

    await s.cordon('r1');
    await until('r1 holds the slot', async () => (await s.record('r1'))?.phase === 'Evacuating');
    await s.cordon('r2');
    await until('r2 queued', async () => (await s.record('r2'))?.phase === 'Queued');
    // while r1's servers still move, its pods stop being readable for a while (simulated ms: 3 real
    // s at scale 20): the pod drain after the move fails on it, and so do its next passes
    expect(os.serversOnHost('r1').length).toBeGreaterThan(0);
    s.sandbox.kube.faults.failRequests({
      status: 503,
      forMs: 60_000,
      match: /^GET \/api\/v1\/pods\?.*spec\.nodeName%3Dr1/,
    });
    s.expect4xx(503, 'injected: the pod reads of r1 fail for a while');
    await allEvacuated(s, nodes);

    // r1 went back to Queued when its pass failed, and resumed later
    const r1 = timeline.filter((t) => t.node === 'r1').map((t) => t.phase);
    expect(r1.indexOf('Queued', r1.indexOf('Evacuating'))).toBeGreaterThan(-1);
    expect(r1.at(-1)).toBe('Evacuated');
    expect(maxEvacuating(timeline)).toBe(1);
  }, 90_000);
});
