// fleet.*: the budget is an integer or a percentage; the Lease namespace follows POD_NAMESPACE.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { slotCount } from '../../src/core/fleet/budget.ts';
import { world } from './helpers.ts';

const budget = (v: unknown) => configSchema.safeParse({ fleet: { maxConcurrentEvacuations: v } });

describe('fleet config', () => {
  it('defaults to one node at a time, Leases in the drainer namespace, 30 s slot and 300 s agent leases', () => {
    expect(configSchema.parse({}).fleet).toEqual({
      maxConcurrentEvacuations: 1,
      namespace: 'drainer',
      leaseDuration: 30,
      agentLeaseDuration: 300,
      daemonSet: 'drainer',
      // no windows, freezes or blockers: evacuations may start at any time
      maintenanceWindows: [],
      freezes: [],
      windowEnd: 'finish-running',
      blockers: { interval: 60 },
    });
  });

  it('takes an integer (also as env text) or a percentage; refuses the rest naming the key', () => {
    expect(budget(0).data?.fleet.maxConcurrentEvacuations).toBe(0);
    expect(budget('3').data?.fleet.maxConcurrentEvacuations).toBe(3);
    expect(budget('10%').data?.fleet.maxConcurrentEvacuations).toBe('10%');
    for (const bad of [1.5, -1, 'ten', '0%', '150%']) {
      const r = budget(bad);
      expect(r.success, String(bad)).toBe(false);
      expect(r.error?.issues[0]?.path.join('.')).toBe('fleet.maxConcurrentEvacuations');
    }
  });

  it('a percentage counts the agent nodes, rounded down, at least 1', () => {
    expect(slotCount('10%', 35)).toBe(3);
    expect(slotCount('10%', 5)).toBe(1);
    expect(slotCount(2, 100)).toBe(2);
  });

  it('reads the namespace from POD_NAMESPACE, below DRAINER_FLEET_NAMESPACE', async () => {
    const w = world();
    expect((await w.load({ env: { POD_NAMESPACE: 'ops' } })).fleet.namespace).toBe('ops');
    const both = { POD_NAMESPACE: 'ops', DRAINER_FLEET_NAMESPACE: 'fleet' };
    expect((await w.load({ env: both })).fleet.namespace).toBe('fleet');
    expect((await w.load({ env: { DRAINER_FLEET_MAX_CONCURRENT_EVACUATIONS: '25%' } })).fleet).toMatchObject({
      maxConcurrentEvacuations: '25%',
    });
  });
});
