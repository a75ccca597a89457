// Story: the soak's last check asks every node to have settled: back in service, or Evacuated with
// no guest left. A maintenance drainer refused before changing anything (a server whose owner's way
// out cannot be honoured there) has settled too: the node is as it was, waiting for its owner.
import { describe, expect, it } from 'vitest';
import { refusedUnchanged } from '../../bench/chaos/check.ts';
import { stablyTrue } from '../../bench/chaos/soak.ts';
import type { NodeRecord } from '../../src/core/record/record.ts';

const rec = (more: Partial<NodeRecord>): NodeRecord => ({
  phase: 'Failed',
  trigger: 'cordon',
  since: '2026-11-26T10:00:00.000Z',
  cordonedByUs: false,
  taintedByUs: false,
  plugins: {},
  failureReason: 'EvacuationBlocked',
  ...more,
});

describe('a node the soak counts as settled at its end', () => {
  it('refused before any change for a workload that cannot move: settled', () => {
    expect(refusedUnchanged(rec({}))).toBe(true);
  });

  it('not once drainer changed something, nor for another failure, nor while it evacuates', () => {
    expect(refusedUnchanged(rec({ taintedByUs: true }))).toBe(false);
    expect(refusedUnchanged(rec({ plugins: { nova: { host: 'hv-1', disabledByUs: true } } }))).toBe(false);
    expect(refusedUnchanged(rec({ failureReason: 'InsufficientCapacity' }))).toBe(false);
    expect(refusedUnchanged(rec({ failureReason: undefined }))).toBe(false);
    expect(refusedUnchanged(rec({ phase: 'Evacuating' }))).toBe(false);
  });
});

describe('the fleet is settled only when it stays so', () => {
  it('a look that holds now and no longer a moment later (a restore just began) is not settled', async () => {
    const looks = [true, false];
    expect(await stablyTrue(async () => looks.shift() ?? true, 10)).toBe(false);
    expect(await stablyTrue(async () => true, 10)).toBe(true);
    expect(await stablyTrue(async () => false, 10)).toBe(false);
  });
});
