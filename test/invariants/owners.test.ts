// VMs have owners: drainer starts again every server it stopped once the node is back in service,
// and never one its owner stopped. Judged from the power actions Nova took (who sent each).
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
