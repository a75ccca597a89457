import { describe, expect, it } from 'vitest';
import { memoryText } from '../../src/core/backends/copy-text.ts';
import { MemoryFall, memoryLeft } from '../../src/core/backends/memory-left.ts';
import type { WorkloadProgress } from '../../src/core/backends/plugin.ts';

const GIB = 1024 ** 3;
const vm = (
  name: string,
  state: WorkloadProgress['state'],
  gib: number,
  extra: Partial<WorkloadProgress> = {},
) =>
  ({
    id: name,
    name,
    state,
    action: 'live-migrate',
    attempts: 1,
    memoryBytes: gib * GIB,
    ...extra,
  }) as WorkloadProgress;

describe('the memory left to move off a node', () => {
  it('sums the VMs still on the host (moved and skipped ones are not) with an ETA from the rate so far', () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const items = [
      vm('a', 'succeeded', 4, { startedAt: new Date(t0).toISOString(), durationMs: 20_000 }),
      vm('b', 'succeeded', 4, { startedAt: new Date(t0 + 20_000).toISOString(), durationMs: 20_000 }),
      vm('c', 'migrating', 8),
      vm('d', 'failed', 2),
      vm('e', 'skipped', 16),
    ];

    // 8 GiB in 40 s: 10 GiB left takes 50 s
    expect(memoryLeft(items)).toEqual({
      leftBytes: 10 * GIB,
      bytesPerSecond: Math.round((8 * GIB) / 40),
      etaSeconds: 50,
    });
    expect(memoryText({ memoryLeftBytes: 10 * GIB, bytesPerSecond: (8 * GIB) / 40 })).toBe(
      '10 GiB left, ETA ~50s',
    );
  });

  it('has no rate before anything moved, and no figure when no VM says its memory', () => {
    expect(memoryLeft([vm('c', 'pending', 8)])).toEqual({ leftBytes: 8 * GIB });
    expect(memoryText({ memoryLeftBytes: 8 * GIB })).toBe('8 GiB left');
    expect(
      memoryLeft([{ id: 'x', name: 'x', state: 'pending', action: 'live-migrate', attempts: 0 }]),
    ).toBeUndefined();
    expect(memoryText({})).toBe('');
  });

  it('remembers when it last fell: a flat or rising value keeps the old time', () => {
    const fall = new MemoryFall();
    expect(fall.seen(10, 1_000)).toBe(1);
    expect(fall.seen(10, 5_000)).toBe(1);
    expect(fall.seen(12, 6_000)).toBe(1);
    expect(fall.seen(8, 9_000)).toBe(9);
  });

  it("an owner asked to move a VM (notify) is a wait, not a stall: the clock stays fresh until the owner's time is up", () => {
    // defaults: memoryAlertAfter 1800 s, notifyTimeout 3600 s; one 8 GiB VM waits for its owner
    const asking = [vm('owned', 'pending', 8, { action: 'notify' }), vm('moved', 'succeeded', 4)];
    const left = memoryLeft(asking)!;
    expect(left).toEqual({ leftBytes: 8 * GIB, awaitingOwnerBytes: 8 * GIB });
    const fall = new MemoryFall();
    expect(fall.seen(left.leftBytes, 0, left.awaitingOwnerBytes)).toBe(0);
    expect(fall.seen(left.leftBytes, 3_000_000, left.awaitingOwnerBytes)).toBe(3000); // 50 min in: fresh

    // the owner's time is up: drainer migrates it, and a stall of that migration counts from here
    const moving = memoryLeft([vm('owned', 'migrating', 8), vm('moved', 'succeeded', 4)])!;
    expect(fall.seen(moving.leftBytes, 3_600_000, moving.awaitingOwnerBytes)).toBe(3000);
    expect(fall.seen(moving.leftBytes, 6_000_000, moving.awaitingOwnerBytes)).toBe(3000);
  });

  it('a VM stuck beside one that waits for its owner still counts as stuck', () => {
    const items = [vm('owned', 'pending', 8, { action: 'notify' }), vm('stuck', 'migrating', 2)];
    const left = memoryLeft(items)!;
    const fall = new MemoryFall();
    expect(fall.seen(left.leftBytes, 0, left.awaitingOwnerBytes)).toBe(0);
    expect(fall.seen(left.leftBytes, 2_000_000, left.awaitingOwnerBytes)).toBe(0);
  });
});
