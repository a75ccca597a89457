// Story: an agent acts on its node only while it holds the node's Lease. A second agent waits
// (its watches run, so it is ready) and does nothing; losing the Lease stops the agent at once.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Agent } from '../../src/core/agent/agent.ts';
import type { Slot } from '../../src/core/fleet/types.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { NodeHeldError } from '../../src/errors.ts';
import { FakeCluster, FakeHost, FakeSources, quietLogger, succeeded } from './fakes.ts';

/** A node Lease another instance holds until the test hands it over. */
class TestLease {
  readonly name = 'drainer-node-node-7';
  readonly lost = new AbortController();
  released = 0;
  waitedFor: string[] = [];
  #grant!: () => void;
  readonly #granted = new Promise<void>((r) => (this.#grant = r));
  handOver(): void {
    this.#grant();
  }
  async acquire(signal: AbortSignal, onWait?: (holder: string) => void): Promise<Slot | undefined> {
    onWait?.('drainer-old/uid-1');
    this.waitedFor.push('drainer-old/uid-1');
    await Promise.race([this.#granted, new Promise((r) => signal.addEventListener('abort', r))]);
    if (signal.aborted) return undefined;
    return {
      name: this.name,
      lost: this.lost.signal,
      release: async () => void this.released++,
      abandon: () => undefined,
    };
  }
}

function start() {
  const cluster = new FakeCluster();
  cluster.addNode('node-7', { unschedulable: true });
  const host = new FakeHost([{ name: 'nova', evacuate: async () => succeeded('nova', ['vm-1']) }]);
  const log = quietLogger();
  const reconciler = new Reconciler({ cluster, host, config: configSchema.parse({}), log });
  const stop = new AbortController();
  const lease = new TestLease();
  const agent = new Agent({
    nodeName: 'node-7',
    reconciler,
    sources: new FakeSources(cluster, 'node-7'),
    mode: 'own',
    log,
    signal: stop.signal,
    backoff: { initialMs: 1, maxMs: 10 },
    lease,
  });
  const running = agent.run();
  running.catch(() => undefined);
  return { cluster, host, agent, stop, running, lease };
}

const until = async (what: string, cond: () => boolean) => {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!cond()) throw new Error(`never happened: ${what}`);
};

describe('the node Lease', () => {
  it('a second agent is ready but acts only once the Lease is handed over; a shutdown gives it back', async () => {
    const { cluster, host, agent, stop, running, lease } = start();
    await until('ready', () => agent.ready().ready);
    await new Promise((r) => setTimeout(r, 20));
    expect(lease.waitedFor).toEqual(['drainer-old/uid-1']);
    expect(cluster.writes).toEqual([]);
    expect(host.evacuateCalls).toBe(0);

    lease.handOver();
    await until('Evacuated', () => cluster.record('node-7')?.phase === 'Evacuated');
    stop.abort();
    await running;
    expect(lease.released).toBe(1);
  });

  it('a lost Lease stops the agent: run() ends with NodeHeldError and nothing more is reconciled', async () => {
    const { cluster, agent, running, lease } = start();
    lease.handOver();
    await until('Evacuated', () => cluster.record('node-7')?.phase === 'Evacuated');
    await agent.idle();
    const writes = cluster.writes.length;

    lease.lost.abort();
    await expect(running).rejects.toBeInstanceOf(NodeHeldError);
    cluster.node('node-7').spec.unschedulable = false; // an uncordon nobody acts on any more
    cluster.changed(cluster.node('node-7'));
    await new Promise((r) => setTimeout(r, 20));
    expect(cluster.writes.length).toBe(writes);
    expect(lease.released).toBe(0);
  });
});
