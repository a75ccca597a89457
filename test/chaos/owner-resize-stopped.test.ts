// Story: hv-2's maintenance is a declared reboot, so drainer stopped a `stop` server on the host and
// opened the gate. Its owner then resized that stopped server (Nova resizes a stopped server and keeps
// it stopped) and kubectl drain returned while the resize still ran on the host (chaos seed 424242
// round 4). The guest never ran: the owner's resize neither starts it nor is drainer's doing. A
// running guest on the host still fails the drain's return, resize or not, and so does a stopped
// server in a cold migration nobody's owner asked for (drainer's own move must end before its gate).
import { afterEach, describe, expect, it } from 'vitest';
import { ownerResizedOff } from '../../bench/chaos/check.ts';
import { serversAtReturn, type DrainReturn } from '../../bench/chaos/drains.ts';
import type { ObservedOwnerAction } from '../../src/invariants/world.ts';
import type { OpenStackSandbox } from '../../src/sandbox/openstack/index.ts';
import { nova, start, token } from '../sandbox/openstack/client.ts';

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

const HOST = 'compute-a';
const NOTICE = 20_000;

/** Two servers on the host, one stopped and one running; Nova schedules no move for an hour. */
async function host(): Promise<string> {
  os = await start({
    timings: { scheduleMs: 3_600_000 },
    servers: [
      { id: 'off', name: 'off', projectId: 'admin', host: HOST, status: 'SHUTOFF' },
      { id: 'on', name: 'on', projectId: 'admin', host: HOST },
    ],
  });
  return token(os);
}

const resize = async (t: string, id: string) =>
  (
    await nova(os, 'POST', `/servers/${id}/action`, {
      token: t,
      version: '2.93',
      body: { resize: { flavorRef: 'flavor-c2-r4096-d23' } },
    })
  ).status;
const coldMigrate = async (t: string, id: string) =>
  (await nova(os, 'POST', `/servers/${id}/action`, { token: t, version: '2.93', body: { migrate: null } }))
    .status;

const ownerResize = (name: string, at: number): ObservedOwnerAction => ({
  serverId: name,
  name,
  action: 'resize',
  at,
  host: HOST,
});

/** kubectl drain of the host, returned at 130 s, and what was on the host then. */
const drainReturn = (reboot: boolean): Pick<DrainReturn, 'startedAt' | 'returnedAt' | 'onHost'> => ({
  startedAt: 100_000,
  returnedAt: 130_000,
  onHost: serversAtReturn(os.state.serversOnHost(HOST), reboot),
});

describe("the soak's judge of a drain's return on a declared reboot", () => {
  it('excuses a stopped server its owner is resizing on the host, and nothing that runs a guest', async () => {
    const t = await host();
    expect([await resize(t, 'off'), await resize(t, 'on')]).toEqual([202, 202]);
    expect(os.state.serversOnHost(HOST).map((s) => `${s.name} ${s.status} ${s.vmState}`)).toEqual([
      'off RESIZE stopped',
      'on RESIZE active',
    ]);

    const d = drainReturn(true);
    expect(d.onHost.occupying).toEqual(['server off (RESIZE)', 'server on (RESIZE)']);
    const actions = [ownerResize('off', 125_000), ownerResize('on', 125_000)];
    expect(ownerResizedOff(d, actions, NOTICE)).toEqual(new Set(['server off (RESIZE)']));
  });

  it('a stopped server in a cold migration its owner did not ask for (drainer’s) is still an occupant', async () => {
    const t = await host();
    expect(await coldMigrate(t, 'off')).toBe(202);

    const d = drainReturn(true);
    // the owner resized it long before the drain: that resize is over, this move is not the owner's
    expect(ownerResizedOff(d, [ownerResize('off', 10_000)], NOTICE)).toEqual(new Set());
    expect(d.onHost.occupying).toContain('server off (RESIZE)');
  });

  it('on a maintenance that is no declared reboot, no stopped server may stay', async () => {
    const t = await host();
    expect(await resize(t, 'off')).toBe(202);

    const d = drainReturn(false);
    expect(ownerResizedOff(d, [ownerResize('off', 125_000)], NOTICE)).toEqual(new Set());
  });
});
