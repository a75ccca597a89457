// The drain gate's promises: never taken away while a VM is on the node; held where drainer says so.
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/invariants/check.ts';
import { gateDisruptedWhileOccupied } from '../../src/invariants/rules/gate-disrupted.ts';
import { gatesHold, leftoverGates } from '../../src/invariants/rules/gate-held.ts';
import type { World } from '../../src/invariants/world.ts';
import { gateName, gatePodName } from '../../src/kube/gate.ts';
import { AT, holdingGate, liveAgent, node, OPTS, rec, world } from './world.ts';

const T0 = 1_000_000;
const POD = `/api/v1/namespaces/drainer/pods/${gateName('node-a')}`;

/** server s1 lived on host-a and moved to host-b at T0 + 500 (Nova's migration record says so). */
const moved = (w: Partial<World> = {}): World =>
  world({
    nodes: [node('node-a', rec('Evacuating'))],
    nova: {
      services: [{ host: 'host-a', status: 'disabled', disabledReason: 'drainer: cordon' }],
      servers: [{ id: 's1', name: 'web-1', host: 'host-b', status: 'ACTIVE' }],
      migrations: [
        {
          id: '1',
          serverId: 's1',
          status: 'completed',
          source: 'host-a',
          dest: 'host-b',
          updatedAt: T0 + 500,
        },
      ],
    },
    ...w,
  });

describe('nothing evicts or deletes the gate while a VM is on the node', () => {
  it.each([
    ['an admitted eviction before the server left', 'POST', `${POD}/eviction`, 201, T0, 1],
    ['a delete before the server left', 'DELETE', POD, 200, T0 + 100, 1],
    ['an eviction refused by the PDB (429)', 'POST', `${POD}/eviction`, 429, T0, 0],
    ['an admitted eviction after the server left', 'POST', `${POD}/eviction`, 201, T0 + 600, 0],
    ['a read of the gate pod', 'GET', POD, 200, T0, 0],
    ['a delete of another pod', 'DELETE', '/api/v1/namespaces/drainer/pods/other', 200, T0, 0],
  ])('%s', (_what, method, path, status, at, n) => {
    const w = moved({
      observations: { requests: [{ method, path, status, at, userAgent: 'kubectl/v1.31' }] },
    });
    const found = gateDisruptedWhileOccupied(w, OPTS);
    expect(found).toHaveLength(n);
    if (n) expect(found[0]?.evidence).toContain('server web-1');
  });

  it("a resize runs on its destination from when it landed, not from its owner's confirm later", () => {
    const resized = (at: number) =>
      moved({
        nova: {
          ...moved().nova!,
          migrations: [
            {
              id: '1',
              serverId: 's1',
              status: 'confirmed',
              source: 'host-a',
              dest: 'host-b',
              landedAt: T0 + 500,
              updatedAt: T0 + 5000,
            },
          ],
        },
        observations: { requests: [{ method: 'DELETE', path: POD, status: 200, at, userAgent: 'drainer' }] },
      });
    expect(gateDisruptedWhileOccupied(resized(T0 + 1000), OPTS)).toEqual([]);
    expect(gateDisruptedWhileOccupied(resized(T0 + 100), OPTS)).toHaveLength(1);
  });

  it('a cold migration into the node that landed after the delete, its record still post-migrating, was not on the node then', () => {
    // Nova shows the server on its destination before the record ends (finish_resize on the
    // destination, then `finished` and the confirm): s2 was on host-c until T0 + 700
    const arriving = (landedAt?: number) =>
      moved({
        nova: {
          ...moved().nova!,
          servers: [{ id: 's2', name: 'web-2', host: 'host-a', status: 'ACTIVE' }],
          migrations: [
            {
              id: '2',
              serverId: 's2',
              status: 'post-migrating',
              source: 'host-c',
              dest: 'host-a',
              updatedAt: T0 - 100,
            },
          ].map((m) => (landedAt === undefined ? m : { ...m, landedAt })),
        },
        observations: {
          requests: [{ method: 'DELETE', path: POD, status: 200, at: T0, userAgent: 'drainer' }],
        },
      });
    expect(gateDisruptedWhileOccupied(arriving(T0 + 700), OPTS)).toEqual([]);
    // landed before the delete: on the node then
    expect(gateDisruptedWhileOccupied(arriving(T0 - 50), OPTS)).toHaveLength(1);
  });

  it('counts a VMI on the node at that moment (KubeVirt migration that ended later)', () => {
    const w = world({
      nodes: [node('node-a')],
      vmis: [{ namespace: 'vms', name: 'vm-k', node: 'node-b' }],
      vmiMoves: [
        {
          namespace: 'vms',
          vmi: 'vm-k',
          source: 'node-a',
          target: 'node-b',
          phase: 'Succeeded',
          endedAt: T0 + 10,
        },
      ],
      observations: { requests: [{ method: 'POST', path: `${POD}/eviction`, status: 201, at: T0 }] },
    });
    expect(gateDisruptedWhileOccupied(w, OPTS).map((v) => v.evidence)).toEqual([
      expect.stringContaining('VMI vms/vm-k'),
    ]);
  });

  it('counts no VMI that may have arrived later in the same second (endTimestamp is whole seconds)', () => {
    const w = (endedAt: number) =>
      world({
        nodes: [node('node-a'), node('node-b')],
        vmis: [{ namespace: 'vms', name: 'vm-k', node: 'node-a' }],
        vmiMoves: [
          { namespace: 'vms', vmi: 'vm-k', source: 'node-b', target: 'node-a', phase: 'Succeeded', endedAt },
        ],
        observations: {
          requests: [{ method: 'DELETE', path: POD, status: 200, at: T0 + 400, removed: true }],
        },
      });
    // stamped T0: it ended somewhere in [T0, T0 + 1 s), perhaps after the delete at T0 + 400
    expect(gateDisruptedWhileOccupied(w(T0), OPTS)).toEqual([]);
    // stamped a second earlier: it was surely on node-a
    expect(gateDisruptedWhileOccupied(w(T0 - 1000), OPTS)).toHaveLength(1);
  });

  it('counts no VMI that ended or is being deleted (a drain that deletes pods killed its launcher)', () => {
    const w = world({
      nodes: [node('node-a')],
      vmis: [
        { namespace: 'vms', name: 'vm-done', node: 'node-a', phase: 'Succeeded' },
        { namespace: 'vms', name: 'vm-going', node: 'node-a', phase: 'Running', deleting: true },
        { namespace: 'vms', name: 'vm-live', node: 'node-a', phase: 'Running' },
      ],
      observations: { requests: [{ method: 'DELETE', path: POD, status: 200, at: T0 }] },
    });
    expect(gateDisruptedWhileOccupied(w, OPTS).map((v) => v.evidence)).toEqual([
      expect.stringContaining('1 VM(s) were on node node-a: VMI vms/vm-live'),
    ]);
  });

  it("counts no VMI whose eviction strategy is None: the taker's drain stops it with its launcher pod", () => {
    const w = world({
      nodes: [node('node-a')],
      vmis: [
        { namespace: 'vms', name: 'vm-batch', node: 'node-a', evictionStrategy: 'None' },
        { namespace: 'vms', name: 'vm-live', node: 'node-a', evictionStrategy: 'LiveMigrate' },
      ],
      observations: { requests: [{ method: 'DELETE', path: POD, status: 200, at: T0 }] },
    });
    const found = gateDisruptedWhileOccupied(w, OPTS).map((v) => v.evidence);
    expect(found).toEqual([expect.stringContaining('1 VM(s) were on node node-a: VMI vms/vm-live')]);
  });

  it('counts no VMI made after the request (a VM started again on the node since, a new VMI)', () => {
    // the vm-stop-mark story: drainer stopped vm-k, the Node was deleted and registered again, the gate
    // went with the evacuation's cancel, and the agent started the VM again: its new VMI came later
    const w = (createdAt: number) =>
      world({
        nodes: [node('node-a')],
        vmis: [{ namespace: 'vms', name: 'vm-k', node: 'node-a', phase: 'Running', createdAt }],
        observations: { requests: [{ method: 'DELETE', path: POD, status: 200, at: T0, removed: true }] },
      });
    expect(gateDisruptedWhileOccupied(w(T0 + 1400), OPTS)).toEqual([]);
    // made before the delete: it was there
    expect(gateDisruptedWhileOccupied(w(T0 - 1400), OPTS)).toHaveLength(1);
  });

  it('counts no delete that a finalizer holds (the pod stays; a drain waits until it is gone)', () => {
    const held = { method: 'DELETE', path: POD, status: 200, at: T0, heldBy: ['drainer.dev/gate'] };
    expect(gateDisruptedWhileOccupied(moved({ observations: { requests: [held] } }), OPTS)).toEqual([]);
  });

  it('counts no server created after the request (forced onto the host later)', () => {
    const w = moved({ observations: { requests: [{ method: 'DELETE', path: POD, status: 200, at: T0 }] } });
    const later = { ...w, nova: { ...w.nova!, servers: [{ ...w.nova!.servers[0]!, createdAt: T0 + 1 }] } };
    expect(gateDisruptedWhileOccupied(later, OPTS)).toEqual([]);
  });

  describe("an owner's unshelve puts a server on a host with no migration (chaos seed 4, round 183)", () => {
    // web-1 was shelved and offloaded (on no host); its owner's unshelve placed it on host-a at placedAt
    const unshelved = (placedAt: number, migrations: World['nova'] = moved().nova) =>
      moved({
        nova: {
          ...migrations!,
          servers: [
            { id: 's1', name: 'web-1', host: 'host-a', status: 'ACTIVE', createdAt: T0 - 9000, placedAt },
          ],
        },
        observations: {
          requests: [{ method: 'DELETE', path: POD, status: 200, at: T0, userAgent: 'drainer' }],
        },
      });
    const noMoves = { ...moved().nova!, migrations: [] };

    it('a gate deleted while the server was offloaded, unshelved onto the host after: no VM was there', () => {
      expect(gateDisruptedWhileOccupied(unshelved(T0 + 5000, noMoves), OPTS)).toEqual([]);
    });

    it('a gate deleted after the unshelve placed the server on the host: the breach is still found', () => {
      expect(gateDisruptedWhileOccupied(unshelved(T0 - 5000, noMoves), OPTS).map((v) => v.evidence)).toEqual([
        expect.stringContaining('1 VM(s) were on node node-a: server web-1'),
      ]);
    });

    it('a migration after the unshelve is walked back: on host-a from the unshelve until it left', () => {
      // unshelved onto host-b at T0 - 5000, moved host-b → host-a at T0 + 500: at T0 on host-b, not host-a
      const intoA = {
        ...moved().nova!,
        migrations: [
          {
            id: '2',
            serverId: 's1',
            status: 'completed',
            source: 'host-b',
            dest: 'host-a',
            updatedAt: T0 + 500,
          },
        ],
      };
      expect(gateDisruptedWhileOccupied(unshelved(T0 - 5000, intoA), OPTS)).toEqual([]);
      // unshelved onto host-a at T0 - 5000, moved to host-b at T0 + 500: on host-a at T0
      const w = unshelved(T0 - 5000);
      const onB = { ...w, nova: { ...w.nova!, servers: [{ ...w.nova!.servers[0]!, host: 'host-b' }] } };
      expect(gateDisruptedWhileOccupied(onB, OPTS)).toHaveLength(1);
    });

    // web-1 ran on host-a when the gate went at T0; its owner shelved it later (offloaded from host-a)
    const shelvedAfter = (offloadedAt: number, since?: number, now?: { host: string; placedAt: number }) =>
      unshelved(0, noMoves).nova!.servers.map((s) => ({
        ...s,
        host: now?.host,
        placedAt: now?.placedAt,
        offloaded: { from: 'host-a', at: offloadedAt, ...(since !== undefined ? { since } : {}) },
      }));
    const withServers = (servers: ReturnType<typeof shelvedAfter>) => {
      const w = unshelved(0, noMoves);
      return { ...w, nova: { ...w.nova!, servers } };
    };

    it('a gate deleted while the server ran on the host, shelved by its owner after: the breach is found', () => {
      // offloaded now (on no host), and once unshelved onto host-b
      for (const now of [undefined, { host: 'host-b', placedAt: T0 + 9000 }])
        expect(
          gateDisruptedWhileOccupied(withServers(shelvedAfter(T0 + 2000, undefined, now)), OPTS).map(
            (v) => v.evidence,
          ),
        ).toEqual([expect.stringContaining('1 VM(s) were on node node-a: server web-1')]);
    });

    it('a gate deleted before the stay that ended in the offload began, or after it ended: no VM was there', () => {
      // unshelved onto host-a at T0 + 1000, offloaded from it at T0 + 3000
      expect(gateDisruptedWhileOccupied(withServers(shelvedAfter(T0 + 3000, T0 + 1000)), OPTS)).toEqual([]);
      // offloaded from host-a at T0 - 1000
      expect(gateDisruptedWhileOccupied(withServers(shelvedAfter(T0 - 1000)), OPTS)).toEqual([]);
    });

    it('the walk back through migrations stops at the unshelve: before it the server was on no host', () => {
      // unshelved onto host-a at T0 + 3000, moved to host-b at T0 + 4000 and back at T0 + 6000
      const move = (id: string, source: string, dest: string, updatedAt: number) =>
        ({ id, serverId: 's1', status: 'completed', source, dest, updatedAt }) as const;
      const there = {
        ...moved().nova!,
        migrations: [move('2', 'host-a', 'host-b', T0 + 4000), move('3', 'host-b', 'host-a', T0 + 6000)],
      };
      expect(gateDisruptedWhileOccupied(unshelved(T0 + 3000, there), OPTS)).toEqual([]);
    });
  });

  it("excuses a delete after an operator's drainer release (the documented override), not an eviction", () => {
    const released = {
      reason: 'DrainGateReleased',
      kind: 'Node',
      name: 'node-a',
      message: 'drain gate released by an operator (drainer release) while Failed: drains of node-a go on',
      count: 1,
    };
    const requests = [
      { method: 'DELETE', path: POD, status: 200, at: T0 },
      { method: 'POST', path: `${POD}/eviction`, status: 201, at: T0 },
    ];
    const found = gateDisruptedWhileOccupied(moved({ events: [released], observations: { requests } }), OPTS);
    expect(found.map((v) => v.evidence)).toEqual([expect.stringContaining('gate evicted')]);
  });

  it('judges the moment the pod really goes: the PATCH that drops the last finalizer of a held delete', () => {
    const requests = [
      { method: 'DELETE', path: POD, status: 200, at: T0, heldBy: ['drainer.dev/gate'] },
      { method: 'PATCH', path: POD, status: 200, at: T0 + 100, removed: true, userAgent: 'rogue/1' },
      { method: 'PATCH', path: POD, status: 200, at: T0 + 700, removed: true },
    ];
    const found = gateDisruptedWhileOccupied(moved({ observations: { requests } }), OPTS);
    expect(found.map((v) => v.evidence)).toEqual([
      expect.stringMatching(
        /PATCH .* by rogue\/1 .*\(gate finalizer dropped\) while 1 VM\(s\) were on node node-a/,
      ),
    ]);
  });

  it('takes the node from the pod the request named, not from a name another node may share', () => {
    // hv-1's spare is named as hv-1-b's own gate pod: the pod's node says whose it was
    const spare = '/api/v1/namespaces/drainer/pods/drainer-gate-node-a-b';
    const w = moved({ nodes: [node('node-a', rec('Evacuating')), node('node-a-b')] });
    const on = (podNode: string) => ({
      ...w,
      observations: {
        requests: [{ method: 'DELETE', path: spare, status: 200, at: T0, removed: true, podNode }],
      },
    });
    expect(gateDisruptedWhileOccupied(on('node-a-b'), OPTS)).toEqual([]);
    expect(gateDisruptedWhileOccupied(on('node-a'), OPTS)).toHaveLength(1);
  });

  it("excuses an operator's release only in the maintenance it was given for", () => {
    const requests = [
      { method: 'DELETE', path: POD, status: 200, at: T0, removed: true },
      { method: 'PATCH', path: POD, status: 200, at: T0 + 300, removed: true },
    ];
    const released = (from: number, until?: number) =>
      moved({
        observations: { requests, releases: [{ node: 'node-a', from, ...(until ? { until } : {}) }] },
      });
    expect(gateDisruptedWhileOccupied(released(T0 - 50), OPTS)).toEqual([]);
    // a release of an earlier maintenance (ended at T0 - 10) excuses nothing of this one
    expect(gateDisruptedWhileOccupied(released(T0 - 50, T0 - 10), OPTS)).toHaveLength(2);
    expect(gateDisruptedWhileOccupied(released(T0 + 200), OPTS).map((v) => v.evidence)).toEqual([
      expect.stringContaining('gate deleted'),
    ]);
  });

  it('counts no server stopped on a node whose maintenance is a declared reboot (it may stay, stopped)', () => {
    const stopped = (labels: Record<string, string>): World => {
      const w = moved({
        observations: { requests: [{ method: 'DELETE', path: POD, status: 200, at: T0, removed: true }] },
      });
      return {
        ...w,
        nodes: [{ ...node('node-a', rec('Evacuated')), labels }],
        nova: { ...w.nova!, servers: [{ ...w.nova!.servers[0]!, status: 'SHUTOFF' }] },
      };
    };
    expect(gateDisruptedWhileOccupied(stopped({ 'drainer.dev/reboot': 'true' }), OPTS)).toEqual([]);
    expect(gateDisruptedWhileOccupied(stopped({}), OPTS)).toHaveLength(1);
  });

  it('reads whether the server was stopped at that moment from its power changes, not from its status now', () => {
    const w = moved({
      observations: { requests: [{ method: 'DELETE', path: POD, status: 200, at: T0, removed: true }] },
    });
    const reboot = { ...node('node-a', rec('Evacuated')), labels: { 'drainer.dev/reboot': 'true' } };
    const change = (to: 'stopped' | 'running', at: number) => ({
      serverId: 's1',
      name: 'web-1',
      to,
      by: 'drainer' as const,
      at,
    });
    // ACTIVE now: stopped for the reboot before the delete, started again by the restore after it
    const restarted = {
      ...w,
      nodes: [reboot],
      observations: {
        ...w.observations,
        powerChanges: [change('stopped', T0 - 50), change('running', T0 + 50)],
      },
    };
    expect(gateDisruptedWhileOccupied(restarted, OPTS)).toEqual([]);
    // started again before the delete: it was running on the host
    const early = {
      ...restarted,
      observations: {
        ...w.observations,
        powerChanges: [change('stopped', T0 - 50), change('running', T0 - 10)],
      },
    };
    expect(gateDisruptedWhileOccupied(early, OPTS)).toHaveLength(1);
  });

  it('says nothing without the observation of requests (a live cluster)', () => {
    expect(gateDisruptedWhileOccupied(moved(), OPTS)).toEqual([]);
  });
});

describe('every gate drainer calls held exists and holds', () => {
  const gate = holdingGate('node-a');
  const cases: [string, Partial<World>, string | undefined][] = [
    ['a holding gate', { ...gate }, undefined],
    ['no pod', { gatePdbs: gate.gatePdbs }, 'gate-missing'],
    ['no PDB', { gatePods: gate.gatePods }, 'gate-missing'],
    [
      'a pod being deleted',
      { ...gate, gatePods: [{ ...gate.gatePods[0]!, deleting: true }] },
      'gate-missing',
    ],
    [
      'its pod being deleted and the spare running in its place',
      {
        ...gate,
        gatePods: [
          { ...gate.gatePods[0]!, deleting: true },
          { ...gate.gatePods[0]!, name: gatePodName('node-a', 1) },
        ],
      },
      undefined,
    ],
    [
      'a Pending pod',
      { ...gate, gatePods: [{ ...gate.gatePods[0]!, phase: 'Pending', ready: false }] },
      'gate-not-holding',
    ],
    [
      'a PDB that allows one',
      { ...gate, gatePdbs: [{ ...gate.gatePdbs[0]!, disruptionsAllowed: 1 }] },
      'gate-not-holding',
    ],
    [
      'a PDB status for an older spec',
      { ...gate, gatePdbs: [{ ...gate.gatePdbs[0]!, observed: false }] },
      'gate-not-holding',
    ],
  ];
  it.each(cases)('Evacuating node with %s: %s', (_what, objects, id) => {
    const w = world({ nodes: [node('node-a', rec('Evacuating'))], ...objects });
    expect(gatesHold(w, OPTS).map((v) => v.id)).toEqual(id ? [id] : []);
  });

  it.each([
    ['Evacuated with every VM moved (released)', node('node-a', rec('Evacuated', { outcomes: [] })), 0],
    [
      'released by an operator',
      node('node-a', rec('Evacuating'), {
        annotations: {
          'drainer.dev/gate-released': JSON.stringify({ at: AT, record: rec('Evacuating').since }),
        },
      }),
      0,
    ],
    ['in service with a live agent', node('node-a'), 1],
  ])('%s, with no gate objects', (_what, n, count) => {
    const w = world({ nodes: [n], leases: [liveAgent('node-a')] });
    expect(gatesHold(w, OPTS)).toHaveLength(count);
  });

  it("believes the agent's metric over the record", () => {
    const w = world({
      nodes: [node('node-a', rec('Evacuated', { outcomes: [] }))],
      observations: { metrics: { 'node-a': '# HELP x\ndrainer_drain_gate_held 1\n' } },
    });
    expect(gatesHold(w, OPTS).map((v) => [v.id, v.evidence])).toEqual([
      ['gate-missing', expect.stringContaining('drainer_drain_gate_held is 1')],
    ]);
  });

  it('finds the gate objects of a Node that is gone, and no others', () => {
    const w = world({
      nodes: [node('node-a')],
      ...holdingGate('node-a'),
      gatePods: [
        ...holdingGate('node-a').gatePods,
        { ...holdingGate('node-a').gatePods[0]!, name: gatePodName('node-a', 1) },
      ],
      gatePdbs: [...holdingGate('node-a').gatePdbs, { name: 'drainer-gate-old', observed: true }],
    });
    expect(leftoverGates(w, OPTS).map((v) => v.object)).toEqual([
      'poddisruptionbudget/drainer/drainer-gate-old',
    ]);
  });

  it('checks nothing of gates when the gate is off', () => {
    const w = world({ nodes: [node('node-a', rec('Evacuating'))] });
    expect(checkInvariants(w, { ...OPTS, gate: false }).filter((v) => v.id.startsWith('gate'))).toEqual([]);
  });
});
