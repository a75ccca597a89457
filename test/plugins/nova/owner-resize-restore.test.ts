// Story: hv-2's reboot is over and its restore comes while the owner of a server drainer stopped
// there is in the middle of their own resize of it: Nova has it at VERIFY_RESIZE on its new host,
// still powered off, waiting for the owner's confirm (chaos seed 424242 round 4 came close: the
// owner confirmed just before the restore read it). The resize is the owner's to confirm, and
// resizing is not asking for the server to stay off: drainer's stop is still its newest power
// action. But the confirm may take them hours, and a restore that waits for it holds its node that
// long (it used to, 5 min a pass, then failed the pass and began again). So the restore ends at
// once, the server keeps drainer's mark, and the agent of the host it ends on starts it.
import { describe, expect, it } from 'vitest';
import { MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';
import { STOP_MARK_KEY } from '../../../src/plugins/nova/stop-mark.ts';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';
import { onComputeA, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();

/** compute-a's vm-stop (its way out a stop) stopped by drainer's evacuation; drainers of compute-a and compute-b. */
async function stoppedByDrainer() {
  const clock = await sb.start({
    hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
    servers: [
      onComputeA('vm-stop', { metadata: { [MAINTENANCE_KEY]: 'stop' }, ramMb: 2048, vcpus: 1, diskGb: 10 }),
    ],
  });
  const a = sandboxDrainer(sb.cloud, clock);
  const b = sandboxDrainer(sb.cloud, clock, {}, ComputeClient, 'compute-b');
  const server = () => sb.cloud.state.server('vm-stop');
  const idle = (status: string) => () =>
    server()?.status === status && !server()?.taskState ? true : undefined;
  await a.evacuate();
  await until(idle('SHUTOFF'), 'stopped by drainer');
  return { clock, a, b, server, idle };
}

describe('restore while the owner’s resize of a server drainer stopped waits for their confirm', () => {
  it('ends without waiting for the confirm; the host the server lands on starts it once they confirmed', async () => {
    const { clock, a, b, server, idle } = await stoppedByDrainer();
    await sb.asAdmin('POST', '/servers/vm-stop/action', { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await until(idle('VERIFY_RESIZE'), 'resized, waiting for the owner');

    const began = clock.now();
    await a.restore();
    // a poll or two of the sandbox's clock, not the 5 min it used to follow the resize for
    expect(clock.now() - began).toBeLessThan(30_000);
    expect(server()).toMatchObject({ status: 'VERIFY_RESIZE', host: 'compute-b' });
    expect(server()?.metadata?.[STOP_MARK_KEY]).toBeDefined();
    // the record no longer claims it: the mark does
    expect(JSON.stringify(a.record())).not.toContain('"stopped":true');

    // the owner confirms later: compute-b's agent, in service, finds drainer's mark and starts it
    await clock.sleep(10_000);
    await sb.asAdmin('POST', '/servers/vm-stop/action', { confirmResize: null });
    await until(idle('SHUTOFF'), 'confirmed: off on compute-b');
    expect(await b.stranded(true)).toMatchObject({ what: expect.stringMatching(/vm-stop/), restored: true });
    await until(idle('ACTIVE'), 'started by compute-b’s agent');
    expect(server()).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
    expect(server()?.metadata?.[STOP_MARK_KEY]).toBeUndefined();
  });

  it('leaves one its owner stopped again before resizing to them; its mark goes once Nova lets it', async () => {
    const { a, b, server, idle } = await stoppedByDrainer();
    // the owner's own power actions end drainer's claim: start, stop, then their resize
    await sb.asAdmin('POST', '/servers/vm-stop/action', { 'os-start': null });
    await until(idle('ACTIVE'), 'started by its owner');
    await sb.asAdmin('POST', '/servers/vm-stop/action', { 'os-stop': null });
    await until(idle('SHUTOFF'), 'stopped by its owner');
    await sb.asAdmin('POST', '/servers/vm-stop/action', { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await until(idle('VERIFY_RESIZE'), 'resized, waiting for the owner');

    await a.restore();
    expect(server()).toMatchObject({ status: 'VERIFY_RESIZE' });
    // Nova keeps a server's metadata as it is at VERIFY_RESIZE (409): the mark goes at the next look
    await sb.asAdmin('POST', '/servers/vm-stop/action', { confirmResize: null });
    await until(idle('SHUTOFF'), 'confirmed: off on compute-b');
    await b.stranded(true);
    expect(server()).toMatchObject({ host: 'compute-b', status: 'SHUTOFF' });
    expect(server()?.metadata?.[STOP_MARK_KEY]).toBeUndefined();
  });
});
