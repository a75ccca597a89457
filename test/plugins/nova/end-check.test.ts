// The end of an evacuation on the sandbox Nova: once the last migration is seen ending, what stands
// between it and the evacuation's end is Nova's answer times, so the check that the host is empty
// costs one request. Whether a migration is on its way into the host is read while the migrations
// still run: the host is disabled, so none can be scheduled into it after that read.
import { afterEach, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import { startOpenStack, type OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';

let cloud: OpenStackSandbox | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

describe('the end of an evacuation', () => {
  it('reads the arrivals into the host while migrations run, and ends on the listing that shows it empty', async () => {
    const clock = new ScaledClock(50);
    const ids = ['end-1', 'end-2', 'end-3'];
    cloud = await startOpenStack({
      clock,
      hosts: [{ name: 'compute-a', maxConcurrentLiveMigrations: 1 }, { name: 'compute-b' }],
      servers: ids.map((id) => ({ id, name: id, projectId: 'demo', host: 'compute-a' })),
    });

    const outcome = await sandboxDrainer(cloud, clock).evacuate();

    expect(outcome.succeeded, JSON.stringify(outcome.workloads)).toBe(true);
    const log = cloud.requestLog.filter((r) => r.userAgent?.includes('drainer'));
    const arrivals = log.filter(
      (r) => r.method === 'GET' && /\/os-migrations\?host=compute-a\b/.test(r.path),
    );
    const lastEnd = Math.max(...ids.map((id) => cloud!.state.migrations(id)[0]!.updatedAt));
    // one read of the arrivals, made before the last migration ended
    expect(arrivals).toHaveLength(1);
    expect(arrivals[0]!.at).toBeLessThan(lastEnd);
    // and the evacuation's last request is the listing of the host that found it empty
    expect(log.at(-1)).toMatchObject({
      method: 'GET',
      path: expect.stringMatching(/\/servers\/detail\?.*host=compute-a/),
    });
  });
});
