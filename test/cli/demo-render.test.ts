// The demo's live view: one line per server/VMI and a pod bar, redrawn in place on a terminal.
import { describe, expect, it } from 'vitest';
import { fleetView, frame, plainView, ttyView } from '../../src/demo/render.ts';
import type { Snapshot, TrackedItem } from '../../src/demo/tracker.ts';
import { Capture } from './harness.ts';

const T0 = 1_000_000;
const server = (over: Partial<TrackedItem> = {}): TrackedItem => ({
  kind: 'nova',
  id: 's1',
  name: 'alpha-web-1',
  source: 'compute-1',
  state: 'migrating',
  target: 'compute-2',
  attempts: 1,
  startedAt: T0 + 1000,
  ...over,
});
const snap = (
  items: TrackedItem[],
  evicted = 0,
  now = T0 + 4000,
  over: Partial<Snapshot> = {},
): Snapshot => ({
  phase: 'Evacuating',
  record: undefined,
  holders: [],
  items,
  pods: { total: 4, evicted, terminating: evicted > 0 ? 1 : 0 },
  now,
  ...over,
});
const record = (slot?: string) => ({
  phase: 'Evacuating' as const,
  trigger: 'cordon',
  since: new Date(T0).toISOString(),
  cordonedByUs: false,
  taintedByUs: false,
  plugins: {},
  ...(slot ? { slot } : {}),
});

describe('demo progress view', () => {
  it('shows state, source → target and seconds per workload, and a bar for the pods', () => {
    const lines = frame(snap([server()], 2), 'node-1', T0);

    expect(lines[0]).toBe('node-1: Evacuating  4.0 s');
    expect(lines[1]).toMatch(/^ {2}nova\s+alpha-web-1\s+migrating\s+compute-1 → compute-2\s+3\.0 s$/);
    expect(lines[2]).toMatch(/^ {2}pods\s+\[█{12}░{12}\] {2}2\/4 evicted \(1 terminating\)$/);
  });

  it('redraws in place on a terminal, and only when something changed', () => {
    const out = new Capture(true);
    const view = ttyView(out, 'node-1', T0);

    view.update(snap([server()]));
    const first = out.text;
    view.update(snap([server()]));
    expect(out.text).toBe(first);
    view.update(snap([server({ state: 'moved', endedAt: T0 + 3000 })]));

    expect(first).not.toContain('\x1b[3A');
    expect(out.text.slice(first.length).startsWith('\x1b[3A\r\x1b[2Knode-1')).toBe(true);
    expect(out.text).toMatch(/moved\s+compute-1 → compute-2\s+2\.0 s/);
  });

  it('writes one plain line per change when not on a terminal', () => {
    const out = new Capture(false);
    const view = plainView(out, 'node-1', T0);

    view.update(snap([server()]));
    view.update(snap([server()]));
    view.update(snap([server({ state: 'moved', endedAt: T0 + 3000 })], 1));

    expect(out.text.trim().split('\n')).toEqual([
      '[   4.0 s] node-1: Evacuating',
      '[   4.0 s] nova alpha-web-1: migrating compute-1 → compute-2',
      '[   4.0 s] pods: 0/4 evicted',
      '[   4.0 s] nova alpha-web-1: moved compute-1 → compute-2 in 2.0 s',
      '[   4.0 s] pods: 1/4 evicted, 1 terminating',
    ]);
  });

  it('names the fleet slot: the one held while Evacuating, its holder while Queued', () => {
    const holders = [{ slot: 'drainer-evacuation-0', node: 'rack-1' }];
    const held = snap([], 0, T0 + 1000, { record: record('drainer-evacuation-0'), holders });
    const queued = snap([], 0, T0 + 1000, { phase: 'Queued', holders });

    expect(frame(held, 'rack-1', T0)[0]).toBe('rack-1: Evacuating (holds drainer-evacuation-0)  1.0 s');
    expect(frame(queued, 'rack-2', T0)[0]).toBe(
      'rack-2: Queued (drainer-evacuation-0 held by rack-1)  1.0 s',
    );
    expect(frame({ ...queued, holders: [] }, 'rack-2', T0)[0]).toBe(
      'rack-2: Queued (waiting for a slot)  1.0 s',
    );
  });

  it('shows several nodes: their frames one below the other on a terminal, plain lines per node elsewhere', () => {
    const a = snap([server()], 0, T0 + 2000, { record: record('drainer-evacuation-0') });
    const waiting = server({ id: 's2', name: 'alpha-database-1', source: 'compute-9', state: 'waiting' });
    const b = snap([waiting], 0, T0 + 2000, {
      phase: 'Queued',
      holders: [{ slot: 'drainer-evacuation-0', node: 'rack-1' }],
    });
    const firstPicture = new Map([
      ['rack-1', a],
      ['rack-2', { ...b, pods: { total: 0, evicted: 0, terminating: 0 } }],
    ]);
    const tty = new Capture(true);
    const view = fleetView(tty, ['rack-1', 'rack-2'], T0);
    view.update(firstPicture);
    view.update(
      new Map([
        ['rack-1', { ...a, phase: 'Evacuated' as const }],
        ['rack-2', b],
      ]),
    );

    expect(tty.text).toContain('\x1b[2Krack-2: Queued (drainer-evacuation-0 held by rack-1)  2.0 s\n');
    // the second picture replaces all lines of the first: rack-1's three, rack-2's two (no pods, no bar)
    expect(tty.text).toContain('\x1b[5A\r\x1b[2Krack-1: Evacuated');
    // one set of columns for both nodes' workloads
    const states = ['migrating', 'waiting'].map((w) =>
      tty.text
        .split('\n')
        .find((l) => l.includes(` ${w} `))
        ?.replace('\x1b[2K', '')
        .indexOf(w),
    );
    expect(states[0]).toBe(states[1]);

    const plain = new Capture(false);
    const lines = fleetView(plain, ['rack-1', 'rack-2'], T0);
    lines.update(firstPicture);
    expect(plain.text.trim().split('\n')).toEqual([
      '[   2.0 s] rack-1: Evacuating (holds drainer-evacuation-0)',
      '[   2.0 s] nova alpha-web-1: migrating compute-1 → compute-2',
      '[   2.0 s] pods: 0/4 evicted',
      '[   2.0 s] rack-2: Queued (drainer-evacuation-0 held by rack-1)',
      '[   2.0 s] nova alpha-database-1: waiting compute-9',
    ]);
  });
});
