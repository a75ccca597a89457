// The Kubernetes side: NodeMaintenance status agrees with the record, no unexpected 4xx, the
// budget, and agents: records nobody acts on, fleet slots held by agents that are gone.
import { describe, expect, it } from 'vitest';
import { recordsWithoutAgent, slotsOfDeadAgents } from '../../src/invariants/rules/agents.ts';
import { withinBudget } from '../../src/invariants/rules/budget.ts';
import { maintenancesAgree } from '../../src/invariants/rules/maintenance.ts';
import { unexpected4xx } from '../../src/invariants/rules/requests.ts';
import { OPERATOR_FINDINGS } from '../../src/invariants/violation.ts';
import type { WorldMaintenance } from '../../src/invariants/world.ts';
import { AT, liveAgent, node, OPTS, rec, world } from './world.ts';

const nm = (phase?: string, more: Partial<WorldMaintenance> = {}): WorldMaintenance => ({
  name: 'nm-a',
  apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
  nodeName: 'node-a',
  deleting: false,
  ...(phase ? { phase } : {}),
  ...more,
});
const byNm = (phase: string) =>
  rec(phase, {
    trigger: 'NodeMaintenance/nm-a',
    cordonedByUs: true,
    maintenance: { name: 'nm-a', apiVersion: 'x' },
  });

describe("the record's phase agrees with the NodeMaintenance status", () => {
  it.each([
    ['Evacuating', 'Running', 0],
    ['Queued', 'Running', 0],
    ['Evacuated', 'Succeeded', 0],
    ['Failed', 'Failed', 0],
    ['Evacuated', 'Running', 1],
    ['Evacuating', 'Succeeded', 1],
    ['Failed', 'Running', 1],
  ])('record %s, NodeMaintenance %s: %i finding(s)', (phase, nmPhase, n) => {
    expect(
      maintenancesAgree(world({ nodes: [node('node-a', byNm(phase))], maintenances: [nm(nmPhase)] }), OPTS),
    ).toHaveLength(n);
  });

  it.each([
    ['a NodeMaintenance with no record', [node('node-a')], [nm('Running')], 1],
    [
      'an invalid one (Failed by drainer)',
      [node('node-a')],
      [nm('Failed', { reason: 'InvalidDuplicate' })],
      0,
    ],
    ['one being deleted', [node('node-a')], [nm('Succeeded', { deleting: true })], 0],
    ['a record that holds a NodeMaintenance now gone', [node('node-a', byNm('Evacuated'))], [], 1],
    [
      'a record for a cordon beside a NodeMaintenance',
      [node('node-a', rec('Evacuated'))],
      [nm('Running')],
      0,
    ],
    [
      'a record for a cordon beside a NodeMaintenance nobody took',
      [node('node-a', rec('Evacuated'))],
      [nm()],
      1,
    ],
  ])('%s', (_what, nodes, maintenances, n) => {
    expect(maintenancesAgree(world({ nodes, maintenances }), OPTS)).toHaveLength(n);
  });

  it("a NodeMaintenance on a node no agent runs on is the operator's to act on, named as such", () => {
    // the agent taken off hv-4 (drainer.dev/agent=disabled), then `drainer restore --force` there:
    // nobody writes nm-a's status, and nobody would take it up (chaos seed 918273)
    const lonely = world({ nodes: [node('node-a')], maintenances: [nm('Succeeded')], leases: [] });
    const kept = world({
      nodes: [node('node-a')],
      maintenances: [nm('Succeeded')],
      leases: [liveAgent('node-a')],
    });

    expect(maintenancesAgree(lonely, OPTS).map((v) => [v.id, v.node])).toEqual([
      ['maintenance-without-agent', 'node-a'],
    ]);
    expect(maintenancesAgree(kept, OPTS).map((v) => v.id)).toEqual(['maintenance-disagrees']);
    expect(OPERATOR_FINDINGS.has('maintenance-without-agent')).toBe(true);
  });

  it('checks nothing when drainer does not own NodeMaintenances', () => {
    expect(
      maintenancesAgree(world({ nodes: [node('node-a')], maintenances: [nm('Running')] }), {
        ...OPTS,
        ownsMaintenances: false,
      }),
    ).toEqual([]);
  });
});

describe('no request is answered 4xx except the expected ones', () => {
  it.each([
    [404, 0],
    [409, 0],
    [410, 0],
    [429, 0],
    [400, 1],
    [403, 1],
    [422, 1],
  ])('an API answer %i: %i finding(s)', (status, n) => {
    const requests = [{ method: 'PATCH', path: '/api/v1/nodes/node-a', status, at: 1 }];
    expect(unexpected4xx(world({ observations: { requests } }), OPTS)).toHaveLength(n);
  });

  it("accepts the 422 of a JSON patch whose guarding test failed (someone wrote first: the patch's 409)", () => {
    const guard = { method: 'PATCH', path: '/api/v1/nodes/node-a', status: 422, at: 1, guardFailed: true };
    const invalid = { method: 'PATCH', path: '/api/v1/nodes/node-b', status: 422, at: 2 };

    expect(
      unexpected4xx(world({ observations: { requests: [guard, invalid] } }), OPTS).map((v) => v.object),
    ).toEqual(['PATCH /api/v1/nodes/node-b']);
  });

  it('makes one finding per path and code, with the count', () => {
    const r = { method: 'POST', path: '/api/v1/namespaces/default/events?x=1', status: 400, at: 1 };
    const [v, ...rest] = unexpected4xx(
      world({ observations: { requests: [r, r, { ...r, path: '/api/v1/namespaces/default/events' }] } }),
      OPTS,
    );
    expect(rest).toEqual([]);
    expect(v?.evidence).toContain('(3 times)');
  });

  it("finds a 4xx in the agent's log lines, and accepts an expected code given for a story", () => {
    const logLines = [
      JSON.stringify({
        level: 50,
        msg: 'event not recorded',
        err: { message: 'kubernetes POST /api/v1/namespaces/default/events: 400 BadRequest: bad' },
      }),
      JSON.stringify({
        level: 30,
        msg: 'gone',
        err: { message: 'kubernetes DELETE /api/v1/namespaces/x/pods/p: 404 NotFound' },
      }),
      JSON.stringify({
        level: 40,
        msg: 'refused',
        err: { message: 'nova POST /v2.1/servers/s1/action → 400: No valid host was found' },
      }),
    ];
    expect(unexpected4xx(world({ observations: { logLines } }), OPTS).map((v) => v.evidence)).toEqual([
      "the agent's log says kubernetes POST /api/v1/namespaces/default/events: 400",
      "the agent's log says nova POST /v2.1/servers/s1/action: 400",
    ]);
    expect(unexpected4xx(world({ observations: { logLines } }), { ...OPTS, expected4xx: [400] })).toEqual([]);
  });

  it("accepts Nova's 400 to an abort of a migration that had just ended, and no other 400 of Nova's", () => {
    const line = (message: string) => JSON.stringify({ level: 40, msg: 'aborting', err: { message } });
    const logLines = [
      line('nova DELETE /compute/v2.1/servers/s1/migrations/21: 400: Migration 21 is not in progress'),
      line('nova DELETE /compute/v2.1/servers/s1: 400: bad'),
    ];
    expect(unexpected4xx(world({ observations: { logLines } }), OPTS).map((v) => v.evidence)).toEqual([
      "the agent's log says nova DELETE /compute/v2.1/servers/s1: 400",
    ]);
  });
});

describe('never more nodes Evacuating than the budget', () => {
  const nodes = [node('a', rec('Evacuating')), node('b', rec('Evacuating')), node('c', rec('Queued'))];
  it.each([
    [1, 1],
    [2, 0],
    [0, 0],
  ])('budget %i: %i finding(s)', (budget, n) => {
    expect(withinBudget(world({ nodes }), { ...OPTS, budget })).toHaveLength(n);
  });
});

describe('agents: records nobody acts on, slots held by agents that are gone', () => {
  const old = (l: ReturnType<typeof liveAgent>) => ({
    ...l,
    renewTime: new Date(AT.getTime() - 120_000).toISOString(),
  });
  it.each([
    ['a live agent', [liveAgent('node-a')], 0],
    ['an agent that stopped renewing', [old(liveAgent('node-a'))], 1],
    ['no agent Lease', [], 1],
  ])('a record with %s', (_what, leases, n) => {
    expect(
      recordsWithoutAgent(world({ nodes: [node('node-a', rec('Evacuating'))], leases }), OPTS),
    ).toHaveLength(n);
  });

  it('says nothing of agents when Leases could not be read', () => {
    expect(recordsWithoutAgent(world({ nodes: [node('node-a', rec('Evacuating'))] }), OPTS)).toEqual([]);
  });

  const slot = (holder: string) => ({
    name: 'drainer-evacuation-0',
    component: 'fleet-slot',
    holder,
    renewTime: new Date(AT.getTime() - 1000).toISOString(),
    durationSeconds: 30,
  });
  it.each([
    ['held by the live agent', [liveAgent('node-a'), slot('node-a/node-a-pod/uid')], 0],
    ['held by an agent replaced since', [liveAgent('node-a'), slot('node-a/old-pod/uid')], 1],
    ['held by a node with no live agent', [old(liveAgent('node-a')), slot('node-a/node-a-pod/uid')], 1],
    [
      'expired (free to take)',
      [{ ...slot('node-a/x/y'), renewTime: new Date(AT.getTime() - 60_000).toISOString() }],
      0,
    ],
  ])('a fleet slot %s', (_what, leases, n) => {
    expect(slotsOfDeadAgents(world({ leases }), OPTS)).toHaveLength(n);
  });
});
