// Story: the chaos soak in CI. A short soak at a fixed seed runs every step it draws, drains nodes
// with VMs on them by every kind of drain, and ends with the fleet settled, with no promise broken
// along the way. And its checks are not vacuous: a tool that deletes the drain gate of a node whose
// servers have not left is caught.
import { afterEach, describe, expect, it } from 'vitest';
import { Checker } from '../../bench/chaos/check.ts';
import { Drains, refusedByPlan } from '../../bench/chaos/drains.ts';
import { FLEET_NODES, REBOOT_NODES, serverWays, startFleet, type Fleet } from '../../bench/chaos/fleet.ts';
import { Owners } from '../../bench/chaos/owners.ts';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import { kubeletRegistration, Operator } from '../../bench/chaos/operator.ts';
import { makeSchedule } from '../../bench/chaos/schedule.ts';
import {
  awaitTarget,
  Blocked,
  BLOCKED_ROUNDS,
  MAX_DRAINS,
  maintenancesOf,
  roundPrng,
  runSoak,
} from '../../bench/chaos/soak.ts';
import { gateName } from '../../src/kube/gate.ts';
import { microTime } from '../../src/core/fleet/budget.ts';

/**
 * Its first 24 steps draw 14 of the 29 kinds of step (an owner, an agent taken off by label, a VMI
 * made again under its name and a stopped server moved onto a host in maintenance among them) and all
 * five kinds of drain.
 */
const SEED = 37;
const ROUNDS = 24;

describe('chaos soak (sandbox fleet)', () => {
  let fleet: Fleet | undefined;
  afterEach(async () => fleet?.close());

  it(`runs ${ROUNDS} rounds of seed ${SEED} and breaks no promise`, async () => {
    const steps = makeSchedule(SEED, ROUNDS, FLEET_NODES);
    // settle: a Failed evacuation is tried again one resync later, and stops and starts now take Nova's time
    const r = await runSoak({ seed: SEED, steps, settleMs: 60_000, graceMs: 10_000 });

    expect(r.ran).toEqual(steps);
    const injected = Object.values(r.injected).reduce((a, b) => a + b, 0);
    expect(injected + r.skipped).toBe(ROUNDS);
    // a step with nothing to act on (no VMI running, no stopped server to move) is skipped
    expect(Object.values(r.injected).filter((n) => n > 0).length).toBeGreaterThanOrEqual(12);
    expect(new Set(r.drains.returns.map((d) => d.kind)).size).toBeGreaterThanOrEqual(3);
    expect(r.findings).toEqual([]);
    expect(r.endState.map((n) => n.node).sort()).toEqual([...FLEET_NODES]);
  }, 300_000);

  it('catches a tool that deletes the gate of a node whose servers are still on it', async () => {
    const f = await startFleet();
    fleet = f;
    for (const node of FLEET_NODES) await f.startAgent(node);
    const operator = new Operator(f.sandbox.kube.url, 'drainer', kubeletRegistration(f.sandbox.scenario));
    const drains = new Drains(f, operator, maintenancesOf(f));
    const checker = new Checker(f, drains, { graceMs: 10_000 });
    const gate = () => f.sandbox.kube.store.find('pods', 'drainer', gateName('hv-2'));
    for (let i = 0; i < 200 && (gate()?.status as { phase?: string } | undefined)?.phase !== 'Running'; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await checker.check(0)).toEqual([]);

    await operator.cordon('hv-2', true);
    // not the soak's own hand: a tool of its own, ignoring the gate, that strips the finalizer a plain
    // delete would wait on, then deletes
    const url = `${f.sandbox.kube.url}/api/v1/namespaces/drainer/pods/${gateName('hv-2')}`;
    const rogue = { 'user-agent': 'rogue-drain/0.1' };
    const stripped = await fetch(url, {
      method: 'PATCH',
      headers: { ...rogue, 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { finalizers: null } }),
    });
    expect(stripped.status).toBe(200);
    const res = await fetch(url, { method: 'DELETE', headers: rogue });
    expect(res.status).toBe(200);
    expect(f.sandbox.openstack.state.serversOnHost('hv-2').length).toBeGreaterThan(0);

    const found = await checker.check(1);
    const hit = found.find((x) => x.id === 'gate-disrupted-while-occupied');
    expect(hit?.object).toBe(`pod/drainer/${gateName('hv-2')}`);
    expect(hit?.evidence).toMatch(/rogue-drain.*server hv-2-vm/);
  }, 60_000);

  it('an agent that lost its node Lease exits and its container starts again, as a DaemonSet pod does', async () => {
    // an API outage past the Lease's duration: the agent stops acting (and its process exits);
    // the kubelet starts the container again and the new process takes the Lease back
    const f = await startFleet();
    fleet = f;
    const first = await f.startAgent('hv-3');
    const lease = () =>
      f.sandbox.kube.store.find('leases.coordination.k8s.io', 'drainer', 'drainer-node-hv-3')?.spec as
        { holderIdentity?: string } | undefined;
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
      return ok();
    };
    expect(await until(() => lease()?.holderIdentity === first.instance)).toBe(true);

    // someone else holds it now: the agent's next renewal finds out it lost it
    const url = `${f.sandbox.kube.url}/apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-node-hv-3`;
    const taken = await fetch(url, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { holderIdentity: 'a-stale-pod', renewTime: microTime(new Date()) } }),
    });
    expect(taken.status).toBe(200);

    const restarted = () => f.agents.get('hv-3')?.filter((a) => a !== first) ?? [];
    expect(await until(() => restarted().length === 1)).toBe(true);
    expect(f.agents.get('hv-3')?.map((a) => a.instance)).toEqual([first.instance]);
    expect(await until(() => lease()?.holderIdentity === first.instance)).toBe(true);
  }, 60_000);

  it("a round's drain waits for a free drain cycle, so how many drains run does not follow the machine's load", async () => {
    const f = await startFleet();
    fleet = f;
    const drains = { running: MAX_DRAINS, busy: (node: string) => node !== 'hv-2' };
    setTimeout(() => (drains.running = MAX_DRAINS - 1), 300);

    // every cycle taken: none at once
    expect(await awaitTarget(f, drains, 'kubectl', roundPrng(1, 1), 0)).toBeUndefined();
    const from = Date.now();
    // one ends: the round drains the one node with VMs not draining
    expect(await awaitTarget(f, drains, 'kubectl', roundPrng(1, 1), 5_000)).toBe('hv-2');
    expect(Date.now() - from).toBeGreaterThanOrEqual(250);
  }, 30_000);

  it("a node drainer's plan keeps refusing has its stop servers' owners asked, and is drained again", async () => {
    const f = await startFleet();
    fleet = f;
    const owners = new Owners(f, maintenancesOf(f), serverWays());
    // a stop server on a node whose maintenance is no declared reboot (as its owner's resize puts one there)
    const sink = FLEET_NODES.find((n) => !REBOOT_NODES.includes(n))!;
    expect(refusedByPlan(f, sink)).toBe(false);
    const stop = f.sandbox.openstack.state.addServer({
      name: 'moved-here',
      projectId: f.sandbox.openstack.state.servers()[0]!.projectId,
      host: sink,
      ramMb: 2048,
      metadata: { [MAINTENANCE_KEY]: 'stop' },
    });
    expect(refusedByPlan(f, sink)).toBe(true);

    const blocked = new Blocked();
    const due = (round: number) => blocked.due(round, (n) => refusedByPlan(f, n));
    expect(due(1)).toEqual([]);
    expect(due(BLOCKED_ROUNDS)).toEqual([]);
    expect(due(BLOCKED_ROUNDS + 1)).toEqual([sink]);

    const asked = await owners.unblock(sink);
    expect(asked).toEqual([{ action: 'policy', server: stop.name, status: 200 }]);
    expect(refusedByPlan(f, sink)).toBe(false);
    owners.close();
  }, 30_000);
});
