// Nova's side of the promises: no service left disabled by drainer without an owner, and what
// drainer reports moved agrees with Nova's migration records and the servers' hosts.
import { describe, expect, it } from 'vitest';
import { strandedServices } from '../../src/invariants/rules/stranded.ts';
import { migrationTruth } from '../../src/invariants/rules/migrations.ts';
import type { World, WorldEvent, WorldNova } from '../../src/invariants/world.ts';
import { OPERATOR_FINDINGS } from '../../src/invariants/violation.ts';
import { liveAgent, node, OPTS, rec, world } from './world.ts';

const disabled = (reason: string | null, host = 'host-a') => ({
  host,
  status: 'disabled',
  disabledReason: reason,
});

describe("every nova-compute disabled with drainer's reason belongs to a node with a record, or an Event says why not", () => {
  const stranded: [string, Partial<World>, number][] = [
    ['a record owns it', { nodes: [node('host-a', rec('Evacuated'))] }, 0],
    ['no record (Node re-registered)', { nodes: [node('host-a')] }, 1],
    [
      'no record, but a StrandedService Event',
      {
        nodes: [node('host-a')],
        events: [
          {
            reason: 'StrandedService',
            kind: 'Node',
            name: 'host-a',
            message: 'left disabled: cordoned',
            count: 1,
          },
        ],
      },
      0,
    ],
    ['no Node at all', { nodes: [] }, 1],
    [
      'a record the agent cannot read',
      { nodes: [{ ...node('host-a'), record: { kind: 'unreadable', problem: 'x' } }] },
      0,
    ],
  ];
  it.each(stranded)('%s', (_what, w, n) => {
    const nova: WorldNova = { services: [disabled('drainer: cordon 2026')], servers: [], migrations: [] };
    expect(strandedServices(world({ ...w, nova }), OPTS)).toHaveLength(n);
  });

  it.each([
    ['disabled by someone else', disabled('hardware swap')],
    ['enabled', { host: 'host-a', status: 'enabled', disabledReason: null }],
  ])('leaves a service %s alone', (_what, svc) => {
    expect(
      strandedServices(
        world({ nodes: [node('host-a')], nova: { services: [svc], servers: [], migrations: [] } }),
        OPTS,
      ),
    ).toEqual([]);
  });

  it("a node with no agent to enable it (taken off, then the Node made again): the operator's finding", () => {
    // chaos seed 477361: hv-1-b's agent taken off mid-evacuation, its Node deleted and registered again
    const nova: WorldNova = { services: [disabled('drainer: cordon 2026')], servers: [], migrations: [] };
    const lonely = world({ nodes: [node('host-a')], nova, leases: [] });
    const kept = world({ nodes: [node('host-a')], nova, leases: [liveAgent('host-a')] });

    expect(strandedServices(lonely, OPTS).map((v) => [v.id, v.node])).toEqual([
      ['stranded-service-without-agent', 'host-a'],
    ]);
    expect(strandedServices(kept, OPTS).map((v) => v.id)).toEqual(['stranded-service']);
    expect(OPERATOR_FINDINGS.has('stranded-service-without-agent')).toBe(true);
  });

  it('finds the node of an FQDN host by its short name, and names it in the fix', () => {
    const w = world({
      nodes: [node('node-1')],
      nova: { services: [disabled('drainer: x', 'node-1.cloud.example.org')], servers: [], migrations: [] },
    });
    const [v] = strandedServices(w, OPTS);
    expect(v?.object).toBe('nova-compute/node-1.cloud.example.org');
    expect(v?.fix).toContain('drainer restore --node node-1');
  });
});

const ev = (reason: string, message: string, name = 'node-a'): WorldEvent => ({
  reason,
  kind: 'Node',
  name,
  message,
  count: 1,
});
const succeeded = ev('MigrationSucceeded', 'nova: web-1 (s1): moved to host-b in 3s');
const failed = ev('MigrationFailed', 'nova: web-1 (s1): no migration in progress to abort');

/** s1 on `now`, with the given finished moves. */
const nova = (now: string, moves: [string, string][] = []): WorldNova => ({
  services: [],
  servers: [{ id: 's1', name: 'web-1', host: now, status: 'ACTIVE' }],
  migrations: moves.map(([source, dest], i) => ({
    id: String(i),
    serverId: 's1',
    status: 'completed',
    source,
    dest,
    updatedAt: i,
  })),
});

describe('every MigrationSucceeded and moved count matches Nova; no MigrationFailed for a server that moved', () => {
  const cases: [string, WorldEvent[], WorldNova, object, string[]][] = [
    ['succeeded, and Nova moved it', [succeeded], nova('host-b', [['host-a', 'host-b']]), {}, []],
    [
      'succeeded, but it is still on the host',
      [succeeded],
      nova('host-a'),
      {},
      ['migration-succeeded-unconfirmed'],
    ],
    [
      'succeeded, but Nova has no finished migration',
      [succeeded],
      nova('host-b'),
      {},
      ['migration-succeeded-unconfirmed'],
    ],
    [
      "succeeded in Nova's post-migration: the server runs on host-b, its record still says running",
      [succeeded],
      {
        ...nova('host-b'),
        migrations: [{ id: '3', serverId: 's1', status: 'running', source: 'host-a', dest: 'host-b' }],
      },
      {},
      [],
    ],
    [
      'succeeded, but the migration still copies (the server on the host, its record running)',
      [succeeded],
      {
        ...nova('host-a'),
        migrations: [{ id: '3', serverId: 's1', status: 'running', source: 'host-a', dest: 'host-b' }],
      },
      {},
      ['migration-succeeded-unconfirmed'],
    ],
    [
      'succeeded, then moved back by a later migration',
      [succeeded],
      nova('host-a', [
        ['host-a', 'host-b'],
        ['host-b', 'host-a'],
      ]),
      {},
      [],
    ],
    [
      'succeeded, then shown back on the host while the migration bringing it back is still running',
      [succeeded],
      {
        ...nova('host-a', [['host-a', 'host-b']]),
        migrations: [
          ...(nova('host-a', [['host-a', 'host-b']]).migrations ?? []),
          { id: '9', serverId: 's1', status: 'running', source: 'host-b', dest: 'host-a', updatedAt: 5 },
        ],
      },
      {},
      [],
    ],
    [
      'succeeded, and a migration back onto the host failed: the server there is unexplained',
      [succeeded],
      {
        ...nova('host-a', [['host-a', 'host-b']]),
        migrations: [
          ...(nova('host-a', [['host-a', 'host-b']]).migrations ?? []),
          { id: '9', serverId: 's1', status: 'error', source: 'host-b', dest: 'host-a', updatedAt: 5 },
        ],
      },
      {},
      ['migration-succeeded-unconfirmed'],
    ],
    [
      'succeeded, migration completed, but the server never left (Nova reported from the field)',
      [succeeded],
      nova('host-a', [['host-a', 'host-b']]),
      {},
      ['migration-succeeded-unconfirmed'],
    ],
    ['failed, and it is still on the host', [failed], nova('host-a'), {}, []],
    [
      'failed, but Nova moved it (the cancel bug)',
      [failed],
      nova('host-b', [['host-a', 'host-b']]),
      {},
      ['migration-failed-but-moved'],
    ],
    [
      "failed, and its owner's resize took it off the host since (drainer never resizes)",
      [failed],
      {
        ...nova('host-b'),
        migrations: [
          { id: '4', serverId: 's1', status: 'confirmed', source: 'host-a', dest: 'host-b', type: 'resize' },
        ],
      },
      {},
      [],
    ],
    [
      'failed, but its cold migration moved it (drainer migrates a stopped server so)',
      [failed],
      {
        ...nova('host-b'),
        migrations: [
          {
            id: '4',
            serverId: 's1',
            status: 'confirmed',
            source: 'host-a',
            dest: 'host-b',
            type: 'migration',
          },
        ],
      },
      {},
      ['migration-failed-but-moved'],
    ],
    [
      'failed (an uncordon aborted it, it stayed), then a later evacuation moved it, its report not yet written',
      [{ ...failed, at: 100 }],
      {
        ...nova('host-b'),
        migrations: [
          { id: '36', serverId: 's1', status: 'cancelled', source: 'host-a', dest: 'host-b', createdAt: 10 },
          { id: '37', serverId: 's1', status: 'completed', source: 'host-a', dest: 'host-b', createdAt: 150 },
        ],
      },
      {},
      [],
    ],
    [
      'failed at 100, but the migration it was about (begun before) moved it',
      [{ ...failed, at: 100 }],
      {
        ...nova('host-b'),
        migrations: [
          { id: '36', serverId: 's1', status: 'completed', source: 'host-a', dest: 'host-b', createdAt: 10 },
        ],
      },
      {},
      ['migration-failed-but-moved'],
    ],
    [
      'failed once, then succeeded on a retry',
      [failed, succeeded],
      nova('host-b', [['host-a', 'host-b']]),
      {},
      [],
    ],
    [
      "moved count within Nova's",
      [],
      nova('host-b', [['host-a', 'host-b']]),
      { outcomes: [{ plugin: 'nova', succeeded: true, moved: 1, failed: 0 }] },
      [],
    ],
    [
      "moved count above Nova's",
      [],
      nova('host-a'),
      { outcomes: [{ plugin: 'nova', succeeded: true, moved: 1, failed: 0 }] },
      ['moved-count-exceeds-nova'],
    ],
    [
      "progress above Nova's",
      [],
      nova('host-a'),
      { progress: { nova: { moved: 2, total: 2, failed: 0 } } },
      ['moved-count-exceeds-nova'],
    ],
    [
      'moved, then deleted by its owner: Nova lists no server, its migration record stays and counts',
      [],
      { ...nova('host-b', [['host-a', 'host-b']]), servers: [] },
      { outcomes: [{ plugin: 'nova', succeeded: true, moved: 1, failed: 0 }] },
      [],
    ],
  ];
  it.each(cases)('%s', (_what, events, n, more, ids) => {
    const w = world({ nodes: [node('node-a', rec('Evacuating', more))], events, nova: n });
    expect(migrationTruth(w, OPTS).map((v) => v.id)).toEqual(ids);
  });

  it("an owner's shelve and unshelve explain where the server is, not drainer's report", () => {
    const owner = (action: string, host: string, at: number) => ({
      serverId: 's1',
      name: 'web-1',
      action,
      host,
      at,
    });
    // moved off by drainer, then the owner's unshelve (after a shelve elsewhere) put it back on host-a
    const back = nova('host-a', [['host-a', 'host-b']]);
    const unshelved = world({
      nodes: [node('node-a', rec('Evacuated'))],
      events: [succeeded],
      nova: back,
      observations: { ownerActions: [owner('shelve', 'host-b', 5), owner('unshelve', '', 6)] },
    });
    // drainer counted it moved when its owner shelved it on host-a (offloaded), and it was unshelved there
    const shelvedHere = world({
      nodes: [node('node-a', rec('Evacuated'))],
      events: [ev('MigrationSucceeded', 'nova: web-1 (s1): moved')],
      nova: nova('host-a'),
      observations: { ownerActions: [owner('shelve', 'host-a', 5), owner('unshelve', '', 6)] },
    });
    // without the owner's actions, both are drainer's false report
    const unexplained = world({ nodes: [node('node-a', rec('Evacuated'))], events: [succeeded], nova: back });

    expect(migrationTruth(unshelved, OPTS)).toEqual([]);
    expect(migrationTruth(shelvedHere, OPTS)).toEqual([]);
    expect(migrationTruth(unexplained, OPTS).map((v) => v.id)).toEqual(['migration-succeeded-unconfirmed']);
  });

  it('counts a server its owner shelved off the host among the moved, as drainer does (chaos CI seed 164526)', () => {
    const shelved = {
      ...nova('host-a'),
      servers: [{ id: 's1', name: 'web-1', host: '', status: 'SHELVED_OFFLOADED' }],
    };
    const outcome = { outcomes: [{ plugin: 'nova', succeeded: true, moved: 1, failed: 0 }] };
    const told = world({
      nodes: [node('node-a', rec('Evacuated', outcome))],
      nova: shelved,
      observations: {
        ownerActions: [{ serverId: 's1', name: 'web-1', action: 'shelve', host: 'host-a', at: 5 }],
      },
    });
    const untold = world({ nodes: [node('node-a', rec('Evacuated', outcome))], nova: shelved });

    expect(migrationTruth(told, OPTS)).toEqual([]);
    expect(migrationTruth(untold, OPTS).map((v) => v.id)).toEqual(['moved-count-exceeds-nova']);
  });

  it('says nothing of a server Nova no longer lists (deleted since)', () => {
    const w = world({
      nodes: [node('node-a', rec('Evacuated'))],
      events: [succeeded],
      nova: { services: [], servers: [], migrations: [] },
    });
    expect(migrationTruth(w, OPTS)).toEqual([]);
  });
});
