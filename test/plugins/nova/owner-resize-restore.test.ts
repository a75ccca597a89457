// Story: hv-2's reboot is over and its restore comes while the owner of a server drainer stopped
// there is in the middle of their own resize of it: Nova has it at VERIFY_RESIZE on its new host,
// still powered off, waiting for the owner's confirm (chaos seed 424242 round 4 came close: the
// owner confirmed just before the restore read it). The resize is the owner's to confirm, and
// resizing is not asking for the server to stay off: drainer's stop is still its newest power
// action, so once the owner confirmed, restore starts it where it landed.
import { describe, expect, it } from 'vitest';
import { MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';
import { onComputeA, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();

describe('restore while the owner’s resize of a server drainer stopped waits for their confirm', () => {
  it('leaves the confirm to the owner, and starts the server where it landed once they confirmed', async () => {
    const clock = await sb.start({
      hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
      servers: [
        onComputeA('vm-stop', { metadata: { [MAINTENANCE_KEY]: 'stop' }, ramMb: 2048, vcpus: 1, diskGb: 10 }),
      ],
    });
    const d = sandboxDrainer(sb.cloud, clock);
    const idle = (status: string) => () => {
      const s = sb.cloud.state.server('vm-stop');
      return s?.status === status && !s.taskState ? true : undefined;
    };

    await d.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');
    await sb.asAdmin('POST', '/servers/vm-stop/action', { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await until(idle('VERIFY_RESIZE'), 'resized, waiting for the owner');
    const restore = d.restore();
    // the owner confirms only once drainer's restore has seen the server waiting for them
    await clock.sleep(10_000);
    expect(sb.cloud.state.server('vm-stop')).toMatchObject({ status: 'VERIFY_RESIZE' });
    await sb.asAdmin('POST', '/servers/vm-stop/action', { confirmResize: null });
    await restore;

    expect(sb.cloud.state.server('vm-stop')).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });
});
