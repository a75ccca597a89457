// drainer confirms every resize it asked for: no server waits in VERIFY_RESIZE after drainer's cold
// migration (issue 48: past nova.migrationTimeout the tracker gave up on a cold move Nova then
// finished, and the server was left unconfirmed). An owner's own resize is the owner's to confirm.
import { describe, expect, it } from 'vitest';
import { serversLeftInVerifyResize } from '../../src/invariants/rules/verify-resize.ts';
import type { WorldNova, WorldServerAction } from '../../src/invariants/world.ts';
import { OPTS, world } from './world.ts';

const ask = (action: string, byDrainer: boolean, at: number): WorldServerAction => ({
  serverId: 'vm-1',
  action,
  byDrainer,
  at,
});

const nova = (status: string, more: Partial<WorldNova> = {}): WorldNova => ({
  services: [
    { host: 'host-a', status: 'disabled', disabledReason: 'drainer: cordon' },
    { host: 'host-b', status: 'enabled', disabledReason: null },
  ],
  servers: [{ id: 'vm-1', name: 'db', host: 'host-b', status }],
  migrations: [
    { id: 'm1', serverId: 'vm-1', status: 'finished', source: 'host-a', dest: 'host-b', type: 'migration' },
  ],
  ...more,
});

const ids = (n: WorldNova) => serversLeftInVerifyResize(world({ nova: n }), OPTS).map((v) => v.id);

describe('no server left in VERIFY_RESIZE by drainer’s move', () => {
  it.each([
    [
      'drainer migrated it, nobody confirmed',
      nova('VERIFY_RESIZE', { moveActions: [ask('migrate', true, 1)] }),
      1,
    ],
    ['drainer migrated it and confirmed', nova('ACTIVE', { moveActions: [ask('migrate', true, 1)] }), 0],
    [
      'its owner resized it after drainer’s move (the owner confirms)',
      nova('VERIFY_RESIZE', { moveActions: [ask('migrate', true, 1), ask('resize', false, 2)] }),
      0,
    ],
    ['nothing observed, a cold migration off a host drainer disabled', nova('VERIFY_RESIZE'), 1],
    [
      'nothing observed, an owner’s resize',
      nova('VERIFY_RESIZE', {
        migrations: [
          {
            id: 'm1',
            serverId: 'vm-1',
            status: 'finished',
            source: 'host-a',
            dest: 'host-b',
            type: 'resize',
          },
        ],
      }),
      0,
    ],
  ])('%s → %i', (_what, n, count) => {
    expect(ids(n)).toEqual(Array(count).fill('server-left-in-verify-resize'));
  });

  it('names the server and the command that confirms it', () => {
    const [v] = serversLeftInVerifyResize(
      world({ nova: nova('VERIFY_RESIZE', { moveActions: [ask('migrate', true, 1)] }) }),
      OPTS,
    );
    expect(v?.object).toBe('server/db');
    expect(v?.fix).toContain('openstack server migration confirm vm-1');
  });
});
