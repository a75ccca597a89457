// The start of an evacuation at Nova's own pace (issue 51): the host's first listing goes out beside
// the disable of its nova-compute, and the moves that take one of Nova's free slots go out side by
// side; the ones queued behind the slots follow one at a time, in order. The promise holds: a server
// that lands on the host after that first listing, before the disable took, is still moved.
import { describe, expect, it } from 'vitest';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import type { NovaService } from '../../../src/plugins/nova/types.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';
import { onComputeA as server, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();

/** What drainer's calls did, in the order it happened: "<call> sent" and "<call> answered". */
function calls() {
  const seen: string[] = [];
  const timed = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    seen.push(`${what} sent`);
    const answer = await call();
    seen.push(`${what} answered`);
    return answer;
  };
  return { seen, timed };
}

/** n servers on compute-a, whose nova-compute runs `slots` live migrations at once (and drainer M as many). */
async function evacuation(n: number, slots: number, Compute: typeof ComputeClient) {
  const clock = await sb.start({
    hosts: [{ name: 'compute-a', maxConcurrentLiveMigrations: slots }, { name: 'compute-b' }],
    servers: Array.from({ length: n }, (_, i) => server(`vm-${i + 1}`)),
  });
  return sandboxDrainer(sb.cloud, clock, { maxConcurrentMigrations: slots }, Compute).evacuate();
}

describe('the parallel start of an evacuation (sandbox Nova)', () => {
  it('sends the host listing before Nova has answered the disable', async () => {
    const { seen, timed } = calls();
    class Timed extends ComputeClient {
      override disableService(svc: NovaService, reason: string, signal?: AbortSignal) {
        return timed('disable', () => super.disableService(svc, reason, signal));
      }
      override listServersOnHost(...args: Parameters<ComputeClient['listServersOnHost']>) {
        return timed('listing', () => super.listServersOnHost(...args));
      }
    }

    const outcome = await evacuation(2, 1, Timed);

    expect(outcome.succeeded, outcome.message).toBe(true);
    expect(seen.indexOf('listing sent')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf('listing sent')).toBeLessThan(seen.indexOf('disable answered'));
    expect(sb.cloud.state.service('compute-a')?.status).toBe('disabled');
  });

  it('sends the first M live migrations side by side, then the queued ones one at a time', async () => {
    const { seen, timed } = calls();
    class Timed extends ComputeClient {
      override liveMigrate(id: string, signal?: AbortSignal) {
        return timed(id, () => super.liveMigrate(id, signal));
      }
    }

    const outcome = await evacuation(4, 2, Timed);

    expect(outcome.succeeded, outcome.message).toBe(true);
    // M = 2: both sent before either is answered; the third waits for them, the fourth for the third
    const [a, b, c, d] = seen.filter((s) => s.endsWith(' sent')).map((s) => s.replace(/ sent$/, ''));
    expect(seen.slice(0, 2)).toEqual([`${a} sent`, `${b} sent`]);
    expect(seen.slice(4)).toEqual([`${c} sent`, `${c} answered`, `${d} sent`, `${d} answered`]);
    for (const id of ['vm-1', 'vm-2', 'vm-3', 'vm-4'])
      expect(sb.cloud.state.server(id)).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });

  it('moves a server that lands on the host after the first listing, before the disable took', async () => {
    // the host is empty at the listing; a boot scheduled before the disable lands right after it
    let listed: Promise<unknown> | undefined;
    let landed = false;
    class LandsBetween extends ComputeClient {
      override listServersOnHost(...args: Parameters<ComputeClient['listServersOnHost']>) {
        const answer = super.listServersOnHost(...args);
        listed ??= answer.catch(() => undefined);
        return answer;
      }
      override async disableService(svc: NovaService, reason: string, signal?: AbortSignal) {
        await listed;
        if (!landed) sb.cloud.state.addServer(server('vm-late'));
        landed = true;
        return super.disableService(svc, reason, signal);
      }
    }

    const outcome = await evacuation(0, 1, LandsBetween);

    expect(landed).toBe(true);
    expect(outcome.succeeded, outcome.message).toBe(true);
    expect(outcome.workloads.map((w) => [w.name, w.state])).toEqual([['vm-late', 'succeeded']]);
    expect(sb.cloud.state.server('vm-late')).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });
});
