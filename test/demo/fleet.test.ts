// Story: the demo's fleet act. Two rack nodes are cordoned at once with the default budget of one
// slot: one evacuates, the other waits Queued behind it (and says who holds the slot), then
// evacuates in turn; the summary says how long it waited. Read from the act's report (the Node
// records' timeline as the API server stored it), not from its screen.
import { describe, expect, it } from 'vitest';
import { runFleetAct } from '../../src/demo/fleet.ts';
import { renderFleetSummary } from '../../src/demo/fleet-summary.ts';
import { turns, type NodePhase, type PhaseChange } from '../../src/demo/timeline.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Capture } from '../cli/harness.ts';

/** Nodes Evacuating after each change, walked from the timeline itself. */
function evacuatingCounts(changes: readonly PhaseChange[]): number[] {
  const now = new Set<string>();
  return changes.map((c) => {
    if (c.phase === 'Evacuating') now.add(c.node);
    else now.delete(c.node);
    return now.size;
  });
}

describe('demo fleet act', () => {
  it('two nodes cordoned at once, budget 1: one Evacuating at a time, the second Queued first, its wait in the summary', async () => {
    const out = new Capture(false);
    const report = await runFleetAct({
      out,
      log: createLogger({ level: 'silent' }),
      signal: new AbortController().signal,
      scale: 10,
      timeoutSeconds: 30,
      tickMs: 50,
    });

    expect(report.ok).toBe(true);
    expect(report.budget).toBe(1);
    expect(report.nodes).toEqual(['rack-1', 'rack-2']);
    // at most one node Evacuating at any point of the API server's history, and one did
    expect(Math.max(...evacuatingCounts(report.changes))).toBe(1);
    expect(report.maxEvacuating).toBe(1);
    // the backup pod on rack-2 held it (and only it) until it ended
    expect(report.held).toEqual(['rack-2']);

    const [first, second] = report.turns;
    expect(new Set([first?.node, second?.node])).toEqual(new Set(['rack-1', 'rack-2']));
    const phasesOf = (node: string | undefined) =>
      report.changes.filter((c) => c.node === node).map((c) => c.phase);
    // the second was Queued, then Evacuating only after the first was Evacuated
    expect(phasesOf(second?.node).slice(0, 3)).toEqual(['Queued', 'Evacuating', 'Evacuated']);
    const at = (node: string | undefined, phase: string) =>
      report.changes.findIndex((c) => c.node === node && c.phase === phase);
    expect(at(first?.node, 'Evacuated')).toBeLessThan(at(second?.node, 'Evacuating'));
    expect(second?.queuedMs).toBeGreaterThan(0);
    expect(second?.behind).toEqual([first?.node]);
    expect(first?.behind).toEqual([]);
    expect(report.turns.map((t) => t.reached)).toEqual(['Evacuated', 'Evacuated']);
    for (const node of report.nodes) {
      const items = report.items[node] ?? [];
      expect(items.length, node).toBe(2);
      expect(
        items.map((i) => [i.state, i.target]),
        node,
      ).toEqual([
        ['moved', 'spare-1'],
        ['moved', 'spare-1'],
      ]);
    }
    expect(report.restore.reached).toBe('InService');

    // what the operator saw: the queued node named the slot's holder, then evacuated
    expect(out.text).toMatch(
      new RegExp(`\\] ${second?.node}: Queued \\(drainer-evacuation-0 held by ${first?.node}\\)`),
    );
    expect(out.text).toMatch(new RegExp(`\\] ${second?.node}: Evacuating \\(holds drainer-evacuation-0\\)`));
    // the summary carries the wait, in simulated seconds as measured
    const summary = renderFleetSummary(report);
    const waited = ((second?.queuedMs ?? 0) / 1000).toFixed(1);
    expect(summary).toContain(`${second?.node} queued ${waited} s behind ${first?.node}, then evacuated in`);
    expect(summary).toMatch(/^most nodes Evacuating at once: 1$/m);
  }, 30_000);
});

describe('fleet turns from a phase timeline', () => {
  const T = 1_000_000;
  /** "node phase seconds; …" → the changes, at T + seconds. */
  const timeline = (text: string): PhaseChange[] =>
    text
      .split(/[;\n]/)
      .map((c) => c.trim().split(' '))
      .filter((c) => c.length === 3)
      .map(([node = '', phase, s]) => ({ node, phase: phase as NodePhase, at: T + Number(s) * 1000 }));
  /** A turn in seconds: waited, behind whom, evacuated for, ended in, took the slot at. */
  const turn = (
    node: string,
    queued: number,
    behind: string[],
    evac: number,
    reached: NodePhase,
    at: number,
  ) => ({
    node,
    queuedMs: expect.closeTo(queued * 1000, 6),
    behind,
    evacuatingMs: expect.closeTo(evac * 1000, 6),
    reached,
    startedAt: T + at * 1000,
  });

  it('per node: the wait from Queued to Evacuating, who was Evacuating meanwhile, and the first evacuation only', () => {
    const changes = timeline(`
      a Queued 0; b Queued 0.1; a Evacuating 0.2; c Queued 1
      a Evacuated 8; b Evacuating 8.1; b Failed 10; c Evacuating 10.2
      a Restoring 11; a InService 12; c Evacuated 15
      a Queued 16
    `); // the last: a second evacuation of a, not its turn in this act

    expect(turns(changes, ['c', 'b', 'a', 'idle'])).toEqual([
      turn('a', 0.2, [], 7.8, 'Evacuated', 0.2),
      turn('b', 8, ['a'], 1.9, 'Failed', 8.1),
      turn('c', 9.2, ['a', 'b'], 4.8, 'Evacuated', 10.2),
      {
        node: 'idle',
        queuedMs: undefined,
        behind: [],
        evacuatingMs: undefined,
        reached: 'InService',
        startedAt: undefined,
      },
    ]);
  });
});
