// A server drainer stopped is started by the agent of the host where it is now, once that host is
// in service, even while the node it was stopped on is still in maintenance, and even when nothing
// but its stop mark remembers the stop (the Node, and its record, were deleted and registered again).
import { describe, expect, it } from 'vitest';
import { STOP_MARK_KEY, stopMarksLeftStopped } from '../../src/invariants/rules/stop-marks.ts';
import type { WorldNova, WorldServerAction } from '../../src/invariants/world.ts';
import { node, OPTS, rec, world } from './world.ts';

const power = (action: string, byDrainer: boolean, at: number): WorldServerAction => ({
  serverId: 'vm-1',
  action,
  byDrainer,
  at,
});
const MARK = { [STOP_MARK_KEY]: 'node=host-a trigger=cordon after=req-1 request=req-2' };

/** db on host-b, SHUTOFF; moved there from host-a at 5 (its owner's resize) when `moved`. */
const nova = (o: { actions?: WorldServerAction[]; mark?: boolean; moved?: boolean; status?: string }) => ({
  services: [
    { host: 'host-a', status: 'enabled', disabledReason: null },
    { host: 'host-b', status: 'enabled', disabledReason: null },
  ],
  servers: [
    {
      id: 'vm-1',
      name: 'db',
      host: o.moved ? 'host-b' : 'host-a',
      status: o.status ?? 'SHUTOFF',
      ...(o.mark ? { metadata: MARK } : {}),
    },
  ],
  migrations: o.moved
    ? [{ id: 'm1', serverId: 'vm-1', status: 'confirmed', source: 'host-a', dest: 'host-b', landedAt: 5 }]
    : [],
  ...(o.actions ? { powerActions: o.actions } : {}),
});

const found = (n: WorldNova, nodes = [node('host-a', rec('Evacuated')), node('host-b')]) =>
  stopMarksLeftStopped(world({ nodes, nova: n }), OPTS).map((v) => v.id);

describe('every server carrying drainer’s stop runs again once its host is in service', () => {
  it.each([
    [
      'stopped on host-a (still in maintenance), resized onto host-b (in service), still SHUTOFF',
      nova({ actions: [power('os-stop', true, 1)], moved: true }),
      1,
    ],
    [
      'the same, and started since',
      nova({ actions: [power('os-stop', true, 1)], moved: true, status: 'ACTIVE' }),
      0,
    ],
    [
      'its owner stopped it again after drainer’s stop and start',
      nova({
        actions: [power('os-stop', true, 1), power('os-start', true, 2), power('os-stop', false, 3)],
        moved: true,
        mark: true,
      }),
      0,
    ],
    ['no power actions observed, only the mark (a real cloud)', nova({ mark: true, moved: true }), 1],
    ['neither a mark nor a power action observed', nova({ moved: true }), 0],
  ])('%s → %i', (_what, n, count) => {
    expect(found(n)).toEqual(Array(count).fill('stop-mark-left-stopped'));
  });

  it('says nothing while the host it is on now is in maintenance', () => {
    const n = nova({ mark: true, moved: true });
    const onB = rec('Evacuated', { plugins: { nova: { host: 'host-b', serviceId: 2, disabledByUs: true } } });
    expect(found(n, [node('host-a'), node('host-b', onB)])).toEqual([]);
  });

  it('a Node registered again (no record) with the marked server still SHUTOFF on it', () => {
    const n = nova({ mark: true });
    const v = stopMarksLeftStopped(world({ nodes: [node('host-a')], nova: n }), OPTS);
    expect(v.map((x) => x.evidence)).toEqual([
      `db (vm-1) carries drainer's stop mark "${MARK[STOP_MARK_KEY]}", and it is still SHUTOFF on host-a, whose node host-a is in service`,
    ]);
  });

  it('leaves to stopped-server-left-stopped the case where the node it was stopped on is in service too', () => {
    const n = nova({ actions: [power('os-stop', true, 1)], moved: true });
    expect(found(n, [node('host-a'), node('host-b')])).toEqual([]);
  });
});
