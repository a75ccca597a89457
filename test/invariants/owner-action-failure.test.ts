// An owner's action is the owner's: drainer never reports what an owner did (shelve, delete, stop)
// as its own failure. (Starting only what drainer stopped: owners.test.ts.)
import { describe, expect, it } from 'vitest';
import { ownerActionReportedAsFailure } from '../../src/invariants/rules/owner-action-failure.ts';
import { node, OPTS, rec, world } from './world.ts';

const T0 = 1_000_000;
describe("no owner's action is reported as drainer's failure", () => {
  const failed = (at: number) => ({
    reason: 'MigrationFailed',
    type: 'Warning',
    kind: 'Node',
    name: 'node-a',
    message: 'nova: web-1 (s1): HOST_UNKNOWN: admin role needed',
    count: 1,
    at,
  });
  const shelved = (until?: number) => ({
    serverId: 's1',
    name: 'web-1',
    action: 'shelve',
    at: T0,
    host: 'node-a',
    ...(until !== undefined ? { until } : {}),
  });
  const w = (eventAt: number, until?: number) =>
    world({
      nodes: [node('node-a', rec('Failed'))],
      events: [failed(eventAt)],
      observations: { ownerActions: [shelved(until)] },
    });

  it('finds a failure reported after the owner shelved the server in this maintenance', () => {
    expect(ownerActionReportedAsFailure(w(T0 + 3000), OPTS).map((v) => v.evidence)).toEqual([
      expect.stringMatching(/MigrationFailed .* its owner did shelve to server web-1/),
    ]);
  });

  it('says nothing of a failure before the owner acted, or in a later maintenance', () => {
    expect(ownerActionReportedAsFailure(w(T0 - 5000), OPTS)).toEqual([]);
    expect(ownerActionReportedAsFailure(w(T0 + 9000, T0 + 8000), OPTS)).toEqual([]);
  });
});
