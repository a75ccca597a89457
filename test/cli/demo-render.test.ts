// The demo's live view: one line per server/VMI and a pod bar, redrawn in place on a terminal.
import { describe, expect, it } from 'vitest';
import { frame, plainView, ttyView } from '../../src/demo/render.ts';
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
const snap = (items: TrackedItem[], evicted = 0, now = T0 + 4000): Snapshot => ({
  phase: 'Evacuating',
  record: undefined,
  holders: [],
  items,
  pods: { total: 4, evicted, terminating: evicted > 0 ? 1 : 0 },
  now,
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
});
