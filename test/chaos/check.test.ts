// Story: a drain returns with a server on the host that its owner started. Nova lets an owner start
// a server on a disabled host, and an agent sees it only at its next look: a start while the drain
// ran, or just before it, is the owner's doing; one that sat there longer is drainer's to have seen.
import { describe, expect, it } from 'vitest';
import { ownerStarted } from '../../bench/chaos/check.ts';
import type { ObservedPowerChange } from '../../src/invariants/world.ts';

const drain = { startedAt: 100_000, returnedAt: 130_000 };
const start = (name: string, at: number, by: 'owner' | 'drainer' = 'owner'): ObservedPowerChange => ({
  serverId: name,
  name,
  to: 'running',
  by,
  at,
});

describe("the soak's judge of a drain's return", () => {
  it("counts a server its owner started while the drain ran, or within an agent's notice before it, as the owner's", () => {
    const changes = [start('during', 120_000), start('just-before', 90_000), start('long-before', 10_000)];
    expect(ownerStarted(drain, changes, 80_000 - 60_000)).toEqual(
      new Set(['server during', 'server just-before']),
    );
  });

  it('never counts a start drainer made, or an owner start after the return', () => {
    const changes = [start('by-drainer', 120_000, 'drainer'), start('after', 140_000)];
    expect(ownerStarted(drain, changes, 80_000)).toEqual(new Set());
  });
});
