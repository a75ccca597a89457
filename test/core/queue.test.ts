import { describe, expect, it } from 'vitest';
import { KeyedQueue, type Handler } from '../../src/core/agent/queue.ts';
import { quietLogger } from './fakes.ts';

function queue(handler: Handler, opts: { onBusy?: (k: string) => void } = {}) {
  const ctl = new AbortController();
  const q = new KeyedQueue({
    handler,
    signal: ctl.signal,
    log: quietLogger(),
    backoff: { initialMs: 1, maxMs: 5 },
    ...(opts.onBusy ? { onBusy: opts.onBusy } : {}),
  });
  return { q, ctl };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(cond()).toBe(true);
};

describe('per-key serial queue', () => {
  it('never runs one key twice at the same time, and coalesces enqueues made while it runs', async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const busy: string[] = [];
    const { q } = queue(
      async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        runs++;
        if (runs === 1) await gate;
        concurrent--;
      },
      { onBusy: (k) => busy.push(k) },
    );

    q.enqueue('node-7');
    q.enqueue('node-7');
    q.enqueue('node-7');
    release();
    await q.idle();

    expect(maxConcurrent).toBe(1);
    expect(runs).toBe(2);
    expect(busy).toEqual(['node-7', 'node-7']);
  });

  it('runs different keys side by side', async () => {
    const running = new Set<string>();
    let both = false;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { q } = queue(async (key) => {
      running.add(key);
      if (running.size === 2) both = true;
      await gate;
    });
    q.enqueue('a');
    q.enqueue('b');
    await until(() => running.size === 2);
    release();
    await q.idle();
    expect(both).toBe(true);
  });

  it('retries a failing key with backoff until it succeeds', async () => {
    let attempts = 0;
    const { q } = queue(async () => {
      attempts++;
      if (attempts < 3) throw new Error('api down');
    });
    q.enqueue('node-7');
    await until(() => attempts === 3);
  });

  it('runs a key again when its result asks for a later run (resync)', async () => {
    let runs = 0;
    const { q, ctl } = queue(async () => {
      runs++;
      return { requeueAfterMs: 1 };
    });
    q.enqueue('node-7');
    await until(() => runs >= 3);
    ctl.abort();
  });

  it('runs a key again once the wait its result handed over comes about, with no timer', async () => {
    let runs = 0;
    let come: ((yes: boolean) => void) | undefined;
    const { q, ctl } = queue(async () => {
      runs++;
      return { requeueWhen: () => new Promise<boolean>((resolve) => (come = resolve)) };
    });
    q.enqueue('node-7');
    await until(() => come !== undefined);
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(1);
    come?.(true);
    await until(() => runs === 2);
    ctl.abort();
  });

  it('drops a handed-over wait once the key runs again for another reason, and on a wait that says no', async () => {
    let runs = 0;
    const waits: { signal: AbortSignal; resolve: (yes: boolean) => void }[] = [];
    const { q, ctl } = queue(async () => {
      runs++;
      return {
        requeueWhen: (signal) => new Promise<boolean>((resolve) => waits.push({ signal, resolve })),
      };
    });
    q.enqueue('node-7');
    await until(() => waits.length === 1);
    q.enqueue('node-7'); // a watch event: the key runs anew and hands over a wait of its own
    await until(() => waits.length === 2);
    expect(waits[0]?.signal.aborted).toBe(true);
    waits[0]?.resolve(true); // too late: it says nothing of the world as the second run saw it
    waits[1]?.resolve(false); // timed out: the resync, not this, brings the next run
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(2);
    ctl.abort();
  });

  it('starts nothing after the signal aborts and lets the running handler finish', async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { q, ctl } = queue(async () => {
      runs++;
      await gate;
    });
    q.enqueue('node-7');
    q.enqueue('node-7'); // would coalesce into a rerun
    ctl.abort();
    q.enqueue('other');
    release();
    await q.stopped();
    expect(runs).toBe(1);
  });
});
