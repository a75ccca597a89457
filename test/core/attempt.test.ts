// A node refused (a blocker, too little capacity) keeps its place: each re-check starts a new
// attempt from the Failed record, and that attempt keeps when the wait began and when the node
// first queued, so status shows the whole wait and the fair queue remembers who waited first.
import { describe, expect, it } from 'vitest';
import { attemptRecord } from '../../src/core/evacuation/attempt.ts';
import type { NodeRecord } from '../../src/core/record/record.ts';

const refused: NodeRecord = {
  phase: 'Failed',
  id: 'm-1',
  trigger: 'cordon',
  since: '2026-03-01T10:00:00.000Z',
  queuedAt: '2026-03-01T10:00:00.000Z',
  cordonedByUs: false,
  taintedByUs: false,
  plugins: {},
  failureReason: 'InsufficientCapacity',
  lastError: 'not enough room for 3 servers',
};

describe('a refused node keeps its place', () => {
  const later = new Date('2026-03-01T12:00:00Z');

  it('the re-check an hour later waits from the first refusal, in its old place in the queue', () => {
    const again = attemptRecord(refused, 'cordon', later, true);
    expect(again).toMatchObject({
      phase: 'Queued',
      since: refused.since,
      queuedAt: refused.queuedAt,
      id: 'm-1',
    });
    expect(again.lastError).toBeUndefined();
  });

  it('without a fleet budget too (no queue): the wait begins at the first refusal', () => {
    expect(attemptRecord(refused, 'cordon', later, false)).toMatchObject({
      phase: 'Evacuating',
      since: refused.since,
    });
  });

  it("its place is on the API server's clock, taken when it first queued and kept by every re-check", () => {
    const server = new Date('2026-03-01T11:59:30Z'); // this agent's clock runs 30 s ahead
    const fresh = attemptRecord(undefined, 'cordon', later, true, server);
    expect(fresh).toMatchObject({ queuedAt: later.toISOString(), queueStamp: server.getTime() });
    const failed: NodeRecord = { ...fresh, phase: 'Failed', failureReason: 'InsufficientCapacity' };
    const again = attemptRecord(failed, 'cordon', new Date('2026-03-01T13:00:00Z'), true);
    expect(again).toMatchObject({ queuedAt: later.toISOString(), queueStamp: server.getTime() });
  });

  it('another trigger is another evacuation: it starts now', () => {
    const other = attemptRecord(refused, 'NodeMaintenance/nm-1', later, true);
    expect(other).toMatchObject({ since: later.toISOString(), queuedAt: later.toISOString() });
  });
});
