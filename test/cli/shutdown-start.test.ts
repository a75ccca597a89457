// The daemon's shutdown trigger at start: off, or no logind on the host, it says so in one line and the
// agent runs as before; with logind it says it watches, naming logind's cap.
import { afterEach, describe, expect, it } from 'vitest';
import { startShutdownTrigger } from '../../src/cli/shutdown.ts';
import { configSchema } from '../../src/config/schema.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import { captureLogger } from '../core/fakes.ts';
import { startFakeLogind } from '../logind/fake-logind.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(shutdown: Record<string, unknown>) {
  const { log, lines } = captureLogger();
  const ac = new AbortController();
  cleanups.push(() => ac.abort());
  await startShutdownTrigger({
    config: configSchema.parse({ shutdown }),
    nodeName: 'node-7',
    k: {} as KubeClients, // not reached: no VM is asked for before a look at the host
    plugins: [],
    log,
    signal: ac.signal,
  });
  return lines;
}

describe('the shutdown trigger at start', () => {
  it('says once that it is off', async () => {
    const lines = await start({ enabled: false });
    expect(lines.join('\n')).toMatch(
      /shutdown.enabled is false: the host shutting down by itself is not watched/,
    );
  });

  it('says once that the host has no system bus', async () => {
    const lines = await start({ busSocket: '/nonexistent/system_bus_socket' });
    expect(lines.join('\n')).toMatch(/no logind on \/nonexistent\/system_bus_socket/);
  });

  it('says once that the bus has no logind', async () => {
    const bus = await startFakeLogind({ login1: false });
    cleanups.push(() => bus.close());
    const lines = await start({ busSocket: bus.socketPath });
    expect(lines.join('\n')).toMatch(/no logind on .*: the host shutting down by itself is not watched/);
  });

  it('watches logind, naming its cap on delay locks', async () => {
    const bus = await startFakeLogind({ inhibitDelayMaxUSec: 30_000_000n });
    cleanups.push(() => bus.close());
    const lines = await start({ busSocket: bus.socketPath });
    expect(lines.join('\n')).toMatch(/"inhibitDelayMaxSec":30.*watching logind/);
  });
});
