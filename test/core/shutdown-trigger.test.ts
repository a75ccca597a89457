// Story: logind announces the host's shutdown while the node hosts VMs. The trigger marks the Node (the
// reconciler evacuates for it) and gives logind's lock back once the host is empty or when its time is up;
// with the API server or the cloud unreachable it gives it back at once and says why. After boot it takes
// the mark off only once the node and nova-compute are ready.
import { describe, expect, it } from 'vitest';
import { ShutdownTrigger, type ShutdownPorts } from '../../src/core/shutdown/trigger.ts';
import { captureLogger } from './fakes.ts';

function setup(o: {
  vms: number[];
  unreachable?: string;
  hang?: boolean;
  ready?: boolean[];
  fallback?: boolean | 'throws';
}) {
  const events: string[] = [];
  const margins: number[] = [];
  let clock = 10_000;
  const vms = [...o.vms];
  const ready = [...(o.ready ?? [])];
  let marked: string | null = null;
  const { log, lines } = captureLogger();
  const ports: ShutdownPorts = {
    lock: {
      want: (hold) => (events.push(`want ${hold}`), Promise.resolve()),
      release: () => (events.push(`release at ${clock}`), Promise.resolve()),
    },
    hosting: () => Promise.resolve(vms.length > 1 ? (vms.shift() ?? 0) : (vms[0] ?? 0)),
    unreachable: () => (o.hang ? new Promise(() => {}) : Promise.resolve(o.unreachable)),
    mark: (v) => ((marked = v), events.push(`mark ${v}`), Promise.resolve()),
    marked: () => Promise.resolve(marked !== null),
    ready: () => {
      const r = ready.shift() ?? true;
      events.push(`ready ${r}`);
      return Promise.resolve(r);
    },
    ...(o.fallback
      ? {
          fallback: (signal: AbortSignal, marginMs: number) => {
            if (o.fallback === 'throws') throw new Error('the plugins could not be asked');
            margins.push(marginMs);
            events.push(`fallback at ${clock}, ${signal.aborted ? 'no time' : 'in time'}`);
            return Promise.resolve('nova: 2 stopped (marked: started again after boot)');
          },
        }
      : {}),
    log,
    now: () => clock,
    sleep: (ms) => ((clock += ms), Promise.resolve()),
    pollMs: 1000,
  };
  return {
    trigger: new ShutdownTrigger(ports),
    events,
    margins,
    lines,
    setMarked: (v: string) => (marked = v),
  };
}

describe('the shutdown trigger', () => {
  it('holds the lock only while the node hosts VMs', async () => {
    const { trigger, events } = setup({ vms: [2, 0] });
    await trigger.refresh(AbortSignal.timeout(1000));
    await trigger.refresh(AbortSignal.timeout(1000));
    expect(events).toEqual(['want true', 'want false']);
  });

  it('marks the Node and gives the lock back as soon as the host is empty', async () => {
    const { trigger, events } = setup({ vms: [3, 2, 0] });
    const r = await trigger.onShutdown({ at: 10_000, releaseBy: 40_000 });
    expect(r).toEqual({ released: 'empty', left: 0 });
    expect(events).toEqual(['mark 1970-01-01T00:00:10.000Z', 'release at 12000']);
  });

  it("gives the lock back by logind's deadline with VMs still there, and says how many", async () => {
    const { trigger, events, lines } = setup({ vms: [3] });
    const r = await trigger.onShutdown({ at: 10_000, releaseBy: 14_500 });
    expect(r).toEqual({ released: 'deadline', left: 3 });
    expect(events.at(-1)).toBe('release at 14500');
    expect(lines.join('\n')).toMatch(/delay lock released with VMs still on the host/);
  });

  it("at logind's deadline stops what is still there through its fallback, then gives the lock back, saying what it did", async () => {
    const { trigger, events, lines } = setup({ vms: [3, 3, 2], fallback: true });
    const r = await trigger.onShutdown({ at: 10_000, releaseBy: 14_500, deadline: 19_500 });
    expect(r).toEqual({ released: 'deadline', left: 2 });
    expect(events).toEqual([
      'mark 1970-01-01T00:00:10.000Z',
      'fallback at 14500, in time',
      'release at 14500',
    ]);
    expect(lines.join('\n')).toMatch(/delay lock released with VMs still on the host: nova: 2 stopped/);
  });

  it('gives its fallback half the time left before the deadline, to the millisecond, and tells it how long', async () => {
    const { trigger, events, margins } = setup({ vms: [3], fallback: true });
    const r = await trigger.onShutdown({ at: 10_000, releaseBy: 14_500, deadline: 17_501 });
    expect(r.released).toBe('deadline');
    expect(events.slice(-2)).toEqual(['fallback at 14500, in time', 'release at 14500']);
    expect(margins).toEqual([1500]); // its own waits end within it (an accepted Nova migration's)
  });

  it('gives the lock back whatever fails on the way, and says what failed', async () => {
    const { trigger, events, lines } = setup({ vms: [3], fallback: 'throws' });
    const r = await trigger.onShutdown({ at: 10_000, releaseBy: 14_500, deadline: 19_500 });
    expect(r.released).toBe('deadline');
    expect(events.at(-1)).toBe('release at 14500');
    expect(lines.join('\n')).toMatch(/fallback failed: the plugins could not be asked/);
  });

  it('needs no fallback once the host is empty', async () => {
    const { trigger, events } = setup({ vms: [1, 0], fallback: true });
    await trigger.onShutdown({ at: 10_000, releaseBy: 14_500, deadline: 19_500 });
    expect(events.some((e) => e.startsWith('fallback'))).toBe(false);
  });

  it('gives the lock back at once, marking nothing, when the cloud is unreachable, with a line that says why', async () => {
    const { trigger, events, lines } = setup({
      vms: [3],
      unreachable: 'nova: connect ECONNREFUSED 127.0.0.1:8774',
    });
    const r = await trigger.onShutdown({ at: 10_000, releaseBy: 40_000 });
    expect(r.released).toBe('unreachable');
    expect(events).toEqual(['release at 10000']);
    expect(lines.join('\n')).toMatch(/released at once, nothing evacuated: nova: connect ECONNREFUSED/);
  });

  it('does not wait on a check that never answers', async () => {
    const { trigger, events, lines } = setup({ vms: [3], hang: true });
    expect((await trigger.onShutdown({ at: 10_000, releaseBy: 40_000 })).released).toBe('unreachable');
    expect(events).toEqual(['release at 10000']);
    expect(lines.join('\n')).toMatch(/no answer in 1.2 s/);
  });

  it('after boot takes the mark off only once the node and nova-compute are ready', async () => {
    const { trigger, events, setMarked } = setup({ vms: [0], ready: [false, false, true] });
    setMarked('1970-01-01T00:00:10.000Z');
    await trigger.afterBoot(new AbortController().signal);
    expect(events).toEqual(['ready false', 'ready false', 'ready true', 'mark null']);
  });

  it('after boot does nothing on a node it did not mark', async () => {
    const { trigger, events } = setup({ vms: [0] });
    await trigger.afterBoot(new AbortController().signal);
    expect(events).toEqual([]);
  });
});
