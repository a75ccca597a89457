// VMs have owners: drainer starts again every server it stopped once the node it stopped it on is
// back in service (wherever the server is now), and never one its owner stopped. Judged from the
// power actions Nova took (who sent each).
import { describe, expect, it } from 'vitest';
import { drainerStopsUndone, ownerStopsUndone } from '../../src/invariants/rules/owners.ts';
import type { WorldServerAction } from '../../src/invariants/world.ts';
import { node, OPTS, rec, world } from './world.ts';

const stop = (at: number, byDrainer = true): WorldServerAction => ({
  serverId: 'vm-1',
  action: 'os-stop',
  byDrainer,
  at,
});
const start = (at: number, byDrainer = true): WorldServerAction => ({
  ...stop(at, byDrainer),
  action: 'os-start',
});

const nova = (status: string, powerActions?: WorldServerAction[]) => ({
  services: [{ host: 'host-a', status: 'enabled', disabledReason: null }],
  servers: [{ id: 'vm-1', name: 'db', host: 'host-a', status }],
  migrations: [],
  ...(powerActions ? { powerActions } : {}),
});

describe('no server drainer stopped is left stopped once its node is back in service', () => {
  it.each([
    ['drainer stopped it, node in service, still SHUTOFF', nova('SHUTOFF', [stop(1)]), undefined, 1],
    ['drainer stopped it and started it again', nova('ACTIVE', [stop(1), start(2)]), undefined, 0],
    [
      'its owner stopped it again after drainer’s start',
      nova('SHUTOFF', [stop(1), start(2), stop(3, false)]),
      undefined,
      0,
    ],
    ['the node is still in maintenance', nova('SHUTOFF', [stop(1)]), rec('Evacuated'), 0],
    ['no power actions observed (a real cloud): nothing said', nova('SHUTOFF'), undefined, 0],
  ])('%s → %i', (_what, n, record, count) => {
    const w = world({ nodes: [node('host-a', record)], nova: n });
    expect(drainerStopsUndone(w, OPTS).map((v) => v.id)).toEqual(
      Array(count).fill('stopped-server-left-stopped'),
    );
  });
});

describe('judged by the node drainer stopped it on, wherever it went since (Nova keeps it stopped)', () => {
  // stopped on host-a at 1, moved to host-b at 5 (its owner's resize, or another evacuation)
  const moved = {
    services: [
      { host: 'host-a', status: 'enabled', disabledReason: null },
      { host: 'host-b', status: 'enabled', disabledReason: null },
    ],
    servers: [{ id: 'vm-1', name: 'db', host: 'host-b', status: 'SHUTOFF' }],
    migrations: [
      { id: 'm1', serverId: 'vm-1', status: 'confirmed', source: 'host-a', dest: 'host-b', landedAt: 5 },
    ],
    powerActions: [stop(1)],
  };
  const onB = rec('Evacuated', { plugins: { nova: { host: 'host-b', serviceId: 2, disabledByUs: true } } });

  it.each([
    ['host-a still in maintenance, host-b in service', 0, [node('host-a', rec('Evacuated')), node('host-b')]],
    ['host-a back in service, host-b in maintenance', 0, [node('host-a'), node('host-b', onB)]],
    ['both back in service', 1, [node('host-a'), node('host-b')]],
  ])('%s → %i', (_what, count, nodes) => {
    const found = drainerStopsUndone(world({ nodes, nova: moved }), OPTS);
    expect(found.map((v) => v.id)).toEqual(Array(count).fill('stopped-server-left-stopped'));
    if (count) expect(found[0]?.evidence).toMatch(/stopped db .* on host-a .*SHUTOFF \(now on host-b\)/);
  });
});

describe('no server its owner stopped is started by drainer', () => {
  it.each([
    ['the owner stopped it, drainer started it', [stop(1, false), start(2)], 1],
    [
      'drainer stopped it after the owner, then started it',
      [stop(1, false), start(2, false), stop(3), start(4)],
      0,
    ],
    ['the owner stopped it and started it themself', [stop(1, false), start(2, false)], 0],
    ['drainer’s own stop and start', [stop(1), start(2)], 0],
  ])('%s → %i', (_what, actions, count) => {
    const w = world({ nodes: [node('host-a')], nova: nova('ACTIVE', actions) });
    expect(ownerStopsUndone(w).map((v) => v.id)).toEqual(Array(count).fill('owner-stop-undone'));
  });
});
