// No failure is reported for a move that Nova completed, even when the server was moved back since
// (issue 48: a cold migration past its timeout, or cancelled by an uncordon, that Nova finished).
import { describe, expect, it } from 'vitest';
import { failuresOfCompletedMoves } from '../../src/invariants/rules/completed-moves.ts';
import type { WorldEvent, WorldMigration, WorldNova } from '../../src/invariants/world.ts';
import { node, OPTS, rec, world } from './world.ts';

const ev = (reason: string, at: number): WorldEvent => ({
  reason,
  kind: 'Node',
  name: 'host-a',
  message: `nova: db (s1): ${reason === 'MigrationFailed' ? 'cold migration did not finish in 600s' : 'moved'}`,
  count: 1,
  at,
});

const move = (
  id: string,
  source: string,
  dest: string,
  createdAt: number,
  status = 'confirmed',
): WorldMigration => ({
  id,
  serverId: 's1',
  status,
  source,
  dest,
  type: 'migration',
  createdAt,
  updatedAt: createdAt + 50,
  landedAt: createdAt + 40,
});

/** s1 now on `now`. */
const nova = (now: string, migrations: WorldMigration[]): WorldNova => ({
  services: [],
  servers: [{ id: 's1', name: 'db', host: now, status: 'SHUTOFF' }],
  migrations,
});

const found = (events: WorldEvent[], n: WorldNova) =>
  failuresOfCompletedMoves(world({ nodes: [node('host-a', rec('Evacuated'))], events, nova: n }), OPTS).map(
    (v) => v.id,
  );

describe('no failure reported for a move Nova completed', () => {
  it.each([
    [
      'reported failed at 100 while the move begun at 10 went on; Nova finished it; moved back since',
      [ev('MigrationFailed', 100)],
      nova('host-a', [move('1', 'host-a', 'host-b', 10), move('2', 'host-b', 'host-a', 500)]),
      1,
    ],
    [
      'the failed attempt ended in error; a later one moved it (and it came back)',
      [ev('MigrationFailed', 100)],
      nova('host-a', [
        move('1', 'host-a', 'host-b', 10, 'error'),
        move('2', 'host-a', 'host-b', 200),
        move('3', 'host-b', 'host-a', 500),
      ]),
      0,
    ],
    [
      'drainer reported it moved afterwards',
      [ev('MigrationFailed', 100), ev('MigrationSucceeded', 150)],
      nova('host-a', [move('1', 'host-a', 'host-b', 10), move('2', 'host-b', 'host-a', 500)]),
      0,
    ],
    [
      'still off the host (migration-failed-but-moved names it)',
      [ev('MigrationFailed', 100)],
      nova('host-b', [move('1', 'host-a', 'host-b', 10)]),
      0,
    ],
    [
      "Nova's record says completed but the server never left its source (design.md: trust the host): the failure was right",
      [ev('MigrationFailed', 100)],
      nova('host-a', [move('1', 'host-a', 'host-b', 10, 'completed')]),
      0,
    ],
    [
      'a record that never moved it, then a later one that did (and it came back): that later move is drainer’s to report',
      [ev('MigrationFailed', 300)],
      nova('host-a', [
        move('1', 'host-a', 'host-b', 10, 'completed'),
        move('2', 'host-a', 'host-b', 200),
        move('3', 'host-b', 'host-a', 500),
      ]),
      1,
    ],
    [
      'a phantom record after a real move off and back: the failure is about the phantom attempt, which moved nothing',
      [ev('MigrationFailed', 700)],
      nova('host-a', [
        move('1', 'host-a', 'host-b', 10),
        move('2', 'host-b', 'host-a', 300),
        move('3', 'host-a', 'host-b', 600, 'completed'),
      ]),
      0,
    ],
    [
      // chaos seed 37 (CI, 0650015): migration 21 completed long before; the server came back; the uncordon
      // aborted the next evacuation's live migration 95, and drainer said so
      'an earlier move completed and came back, then a later attempt aborted: the failure is about the aborted one',
      [ev('MigrationFailed', 700)],
      nova('host-a', [
        move('1', 'host-a', 'host-b', 10),
        move('2', 'host-b', 'host-a', 300),
        move('3', 'host-a', 'host-b', 600, 'cancelled'),
      ]),
      0,
    ],
    [
      'the move reported failed is the newest off the host and Nova completed it (moved back since)',
      [ev('MigrationFailed', 700)],
      nova('host-a', [
        move('1', 'host-a', 'host-b', 10, 'error'),
        move('2', 'host-a', 'host-b', 600),
        move('3', 'host-b', 'host-a', 900),
      ]),
      1,
    ],
    [
      'no creation times (a real cloud read without them): nothing said',
      [ev('MigrationFailed', 100)],
      nova('host-a', [
        { id: '1', serverId: 's1', status: 'confirmed', source: 'host-a', dest: 'host-b', updatedAt: 60 },
        { id: '2', serverId: 's1', status: 'confirmed', source: 'host-b', dest: 'host-a', updatedAt: 600 },
      ]),
      0,
    ],
  ])('%s → %i', (_what, events, n, count) => {
    expect(found(events, n)).toEqual(Array(count).fill('failure-for-completed-move'));
  });
});
