// The owners' promises: drainer starts only what it stopped, leaves nothing it stopped stopped once
// the node is back in service, and never reports what an owner did as its own failure.
import { describe, expect, it } from 'vitest';
import { drainerStopLeft } from '../../src/invariants/rules/drainer-stop-left.ts';
import { ownerActionReportedAsFailure } from '../../src/invariants/rules/owner-action-failure.ts';
import { ownerStopUndone } from '../../src/invariants/rules/owner-stop-undone.ts';
import type { ObservedPowerChange, World } from '../../src/invariants/world.ts';
import { node, OPTS, rec, world } from './world.ts';

const T0 = 1_000_000;
const change = (to: 'stopped' | 'running', by: 'owner' | 'drainer', at: number): ObservedPowerChange => ({
  serverId: 's1',
  name: 'web-1',
  to,
  by,
  at,
  host: 'host-a',
});

/** node-a (host host-a) in service or in maintenance, and web-1 on it, ACTIVE or SHUTOFF. */
const onHostA = (o: { status: string; inService: boolean; changes: ObservedPowerChange[] }): World =>
  world({
    nodes: [node('node-a', o.inService ? undefined : rec('Evacuated'))],
    nova: {
      services: [
        {
          host: 'host-a',
          status: o.inService ? 'enabled' : 'disabled',
          disabledReason: o.inService ? null : 'drainer: cordon',
        },
      ],
      servers: [{ id: 's1', name: 'web-1', host: 'host-a', status: o.status }],
      migrations: [],
    },
    observations: { powerChanges: o.changes },
  });

describe('no server its owner stopped is started by drainer', () => {
  it.each([
    [
      'the owner stopped it, drainer started it',
      [change('stopped', 'owner', T0), change('running', 'drainer', T0 + 5)],
      1,
    ],
    [
      'drainer stopped it and started it again',
      [change('stopped', 'drainer', T0), change('running', 'drainer', T0 + 5)],
      0,
    ],
    [
      'the owner stopped it and started it again',
      [change('stopped', 'owner', T0), change('running', 'owner', T0 + 5)],
      0,
    ],
  ])('%s', (_what, changes, n) => {
    const found = ownerStopUndone(onHostA({ status: 'ACTIVE', inService: true, changes }), OPTS);
    expect(found).toHaveLength(n);
    if (n) expect(found[0]?.evidence).toMatch(/web-1 was stopped by its owner .* started again by drainer/);
  });
});

describe('no server drainer stopped is left stopped once its node is back in service', () => {
  // in service the node has no record to name its host: the configured mapping does
  const MAPPED = { ...OPTS, hostMapping: { 'node-a': 'host-a' } };

  it('finds it stopped after the restore', () => {
    const w = onHostA({ status: 'SHUTOFF', inService: true, changes: [change('stopped', 'drainer', T0)] });
    expect(drainerStopLeft(w, MAPPED).map((v) => v.evidence)).toEqual([
      expect.stringContaining('node node-a is back in service, and the server is still SHUTOFF'),
    ]);
  });

  it('says nothing while the node is still out of service, or when its owner stopped it since', () => {
    const out = onHostA({ status: 'SHUTOFF', inService: false, changes: [change('stopped', 'drainer', T0)] });
    expect(drainerStopLeft(out, MAPPED)).toEqual([]);
    const owners = onHostA({
      status: 'SHUTOFF',
      inService: true,
      changes: [
        change('stopped', 'drainer', T0),
        change('running', 'owner', T0 + 1),
        change('stopped', 'owner', T0 + 2),
      ],
    });
    expect(drainerStopLeft(owners, MAPPED)).toEqual([]);
  });
});

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
