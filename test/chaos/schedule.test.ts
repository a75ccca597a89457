// The soak's schedule: fixed by its seed, every fault kind drawn over a long run, and never more
// than a few nodes taken out of service by its own triggers, so evacuations keep starting.
import { describe, expect, it } from 'vitest';
import { DRAIN_KINDS } from '../../bench/chaos/drains.ts';
import { FLEET_NODES } from '../../bench/chaos/fleet.ts';
import { OWNER_ACTIONS } from '../../bench/chaos/owners.ts';
import {
  RECREATE_AT,
  STEP_KINDS,
  countByKind,
  describeStep,
  makeSchedule,
  type Step,
} from '../../bench/chaos/schedule.ts';

/** Nodes the schedule's own triggers hold out of service after each step. */
function outAfterEach(steps: readonly Step[]): number[] {
  const out = new Map<string, Set<string>>();
  const put: Record<string, string[]> = {
    uncordon: ['cordon'],
    'maintenance-delete': ['maintenance-create'],
    untaint: ['taint'],
  };
  return steps.map((s) => {
    if ('node' in s) {
      const set = out.get(s.node) ?? new Set<string>();
      if (s.kind === 'cordon' || s.kind === 'kubectl-drain') set.add('cordon');
      if (s.kind === 'maintenance-create' || s.kind === 'taint') set.add(s.kind);
      for (const t of put[s.kind] ?? []) set.delete(t);
      if (set.size) out.set(s.node, set);
      else out.delete(s.node);
    }
    return out.size;
  });
}

describe('soak schedule', () => {
  it('is the same for the same seed and differs for another', () => {
    expect(makeSchedule(5, 100, FLEET_NODES)).toEqual(makeSchedule(5, 100, FLEET_NODES));
    expect(makeSchedule(5, 100, FLEET_NODES)).not.toEqual(makeSchedule(6, 100, FLEET_NODES));
  });

  it('has one step per round, and over 300 rounds draws every kind of fault', () => {
    const steps = makeSchedule(1, 300, FLEET_NODES);
    expect(steps).toHaveLength(300);
    const counts = countByKind(steps);
    expect(Object.keys(counts).sort()).toEqual([...STEP_KINDS].sort());
    for (const k of STEP_KINDS) expect(counts[k], k).toBeGreaterThan(0);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(300);
  });

  it('puts back an agent where it took one off, and deletes Nodes at every moment of a maintenance', () => {
    const steps = makeSchedule(2, 400, FLEET_NODES);
    const off = new Set<string>();
    let putBack = 0;
    for (const s of steps) {
      if (s.kind === 'agent-off') off.add(s.node);
      if (s.kind === 'agent-on' && off.has(s.node)) {
        off.delete(s.node);
        putBack++;
      }
    }
    expect(putBack).toBeGreaterThan(3);
    const seeds = [1, 2, 3].flatMap((seed) => makeSchedule(seed, 400, FLEET_NODES));
    const at = new Set(seeds.flatMap((s) => (s.kind === 'node-recreate' ? [s.at] : [])));
    expect(at).toEqual(new Set(RECREATE_AT));
  });

  it('names only nodes of the fleet, and keeps its fault windows short', () => {
    for (const s of makeSchedule(3, 500, FLEET_NODES)) {
      if ('node' in s) expect(FLEET_NODES).toContain(s.node);
      if ('downMs' in s) expect(s.downMs).toBeLessThanOrEqual(3000);
      if ('forMs' in s) expect(s.forMs).toBeLessThanOrEqual(2000);
      if (s.kind === 'clock-skew') expect([-60, 0, 60]).toContain(s.skewSeconds);
    }
  });

  it('takes at most 3 nodes out of service with its own triggers at any time', () => {
    for (const seed of [1, 2, 3, 4]) {
      const out = outAfterEach(makeSchedule(seed, 400, FLEET_NODES));
      expect(Math.max(...out), `seed ${seed}`).toBeLessThanOrEqual(3);
      expect(Math.max(...out), `seed ${seed}`).toBeGreaterThanOrEqual(2);
    }
  });

  it('names a drain kind in every round, and over 200 rounds every kind of drain and of owner action', () => {
    const steps = makeSchedule(2, 200, FLEET_NODES);
    expect(steps.every((s) => s.drain !== undefined)).toBe(true);
    expect(new Set(steps.map((s) => s.drain))).toEqual(new Set(DRAIN_KINDS));
    const actions = new Set(steps.flatMap((s) => (s.kind === 'owner' ? [s.action] : [])));
    expect(actions).toEqual(new Set(OWNER_ACTIONS));
  });

  it('draws no step of a kind it is told to leave out, and is otherwise fixed by the seed', () => {
    const steps = makeSchedule(1, 300, FLEET_NODES, new Set(['daemonset-recreate', 'release'] as const));
    expect(steps.some((s) => s.kind === 'daemonset-recreate' || s.kind === 'release')).toBe(false);
    expect(steps).toHaveLength(300);
    expect(makeSchedule(1, 300, FLEET_NODES, new Set(['release'] as const))).toEqual(
      makeSchedule(1, 300, FLEET_NODES, new Set(['release'] as const)),
    );
  });

  it('prints each step on one line with its parameters', () => {
    expect(describeStep({ kind: 'release', node: 'hv-1-b', force: true, drain: 'capi' })).toBe(
      'release hv-1-b --force + drain capi',
    );
    expect(describeStep({ kind: 'owner', action: 'notify-move' })).toBe('owner notify-move');
    expect(describeStep({ kind: 'agent-kill', node: 'hv-2', downMs: 900 })).toBe(
      'agent-kill hv-2 down=900ms',
    );
    expect(describeStep({ kind: 'cordon', node: 'hv-1' })).toBe('cordon hv-1');
    expect(describeStep({ kind: 'api-errors', status: 503, forMs: 400 })).toBe('api-errors 503 for=400ms');
  });
});
