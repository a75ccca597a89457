// A start of a server drainer stopped that fails (real suite 09c: the Node registered again, nova-compute
// on its host still coming up) is said at warn with Nova's reason and tried again with a backoff,
// bounded, until the server runs, went elsewhere or its owner took it over: the stranded check runs
// once per Node, and a start given up there waited for the next resync (5 minutes) with the server off.
import { afterEach, describe, expect, it } from 'vitest';
import { STOP_MARK_KEY } from '../../../src/plugins/nova/stop-mark.ts';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import { startOpenStack, type OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { captureLogger } from './helpers.ts';
import { sandboxDrainer, stopServer } from './sandbox-drainer.ts';

let cloud: OpenStackSandbox | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

const server = () => cloud!.state.server('vm-stop')!;
const idle = (status: string) => () => (server().status === status && !server().taskState ? true : undefined);
const isStart = (method: string, path: string, body: unknown) =>
  method === 'POST' &&
  path.endsWith('/servers/vm-stop/action') &&
  typeof body === 'object' &&
  body !== null &&
  'os-start' in body;

/** Nova answers the first `times` os-start calls with `answer` instead of starting the server. */
const refuseStarts = (times: number, answer: { status: number; message: string }): void => {
  let left = times;
  cloud!.faults.refuse = (method, path, body) =>
    isStart(method, path, body) && left-- > 0 ? answer : undefined;
};

/** compute-a's drainer stopped vm-stop (marked), then its Node was deleted and registered again: no record. */
async function strandedStop(nova: Record<string, unknown> = {}) {
  const clock = new ScaledClock(100);
  cloud = await startOpenStack({
    clock,
    hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
    servers: [stopServer()],
  });
  const heard = captureLogger('warn');
  const a = sandboxDrainer(cloud, clock, nova, undefined, 'compute-a', heard.log);
  const lines = () => heard.lines.map((l) => JSON.parse(l) as { level: number; reason?: string });
  await a.evacuate();
  await until(idle('SHUTOFF'), 'stopped by drainer');
  a.resumeFrom(undefined);
  return { a, lines };
}

describe('a failed start of a server drainer stopped', () => {
  it('Nova answers the first os-start 500: said at warn with the reason, tried again, and the server runs, its mark off', async () => {
    const { a, lines } = await strandedStop();
    refuseStarts(1, { status: 500, message: 'Unexpected API Error: MessagingTimeout' });

    await a.stranded(true);

    expect([server().status, server().taskState]).toEqual(['ACTIVE', null]);
    expect(server().metadata[STOP_MARK_KEY]).toBeUndefined();
    expect(lines()).toContainEqual(
      expect.objectContaining({ level: 40, reason: expect.stringMatching(/MessagingTimeout/) }),
    );
  });

  it('Nova refuses os-start (409) while nova-compute comes up: asked again after a wait each time, until it runs', async () => {
    const { a } = await strandedStop({ pollInterval: 10 });
    refuseStarts(8, { status: 409, message: 'Service is unavailable at this time.' });

    await a.stranded(true);

    expect([server().status, server().taskState]).toEqual(['ACTIVE', null]);
    expect(server().metadata[STOP_MARK_KEY]).toBeUndefined();
    // each refusal is followed by a wait of a poll (10 s of Nova's time) at least, never asked again at once
    const starts = cloud!.requestLog.filter((r) => r.action === 'os-start').map((r) => r.at);
    expect(starts).toHaveLength(9);
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(10_000);
  });
});
