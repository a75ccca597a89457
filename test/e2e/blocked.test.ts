// Story (issue 23 item 6): the default sandbox's node-4 holds vm-legacy, a VMI that cannot migrate
// (DisksNotLiveMigratable) under kubevirt.nonMigratable: block. Cordoning it is refused before the
// first change, as the capacity verdict is: Failed EvacuationBlocked, nova-compute still enabled,
// no taint, no server touched; and refused again at the next resync.
import { afterEach, describe, expect, it } from 'vitest';
import { EVACUATING_TAINT } from '../../src/core/record/record.ts';
import type { KubeList } from '../../src/kube/types.ts';
import { startStack, until, type EventObject, type Stack } from './stack.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('a workload that must move and cannot (full stack, default sandbox)', () => {
  it('node-4: refused before the first change, with EvacuationBlocked, and looked at again at resync with nothing written', async () => {
    stack = await startStack({ config: { fleet: { maxConcurrentEvacuations: 0 } } });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const agent = s.startAgent('node-4', { resyncInterval: 1 });
    await until('agent ready', () => agent.agent.ready().ready);

    await s.cordon('node-4');
    const rec = await until('node-4 Failed', async () => {
      const r = await s.record('node-4');
      return r?.phase === 'Failed' ? r : undefined;
    });

    expect(rec).toMatchObject({ failureReason: 'EvacuationBlocked', taintedByUs: false });
    expect(rec.lastError).toMatch(/refused before any change: .*vms\/vm-legacy \(.*DisksNotLiveMigratable/);
    const blockedAt = rec.attemptedAt;
    // nothing changed: nova-compute enabled, no taint of ours or KubeVirt's, no server migrated
    expect(os.service('node-4')?.status).toBe('enabled');
    const node = await s.node('node-4');
    const keys = (node.spec?.taints ?? []).map((t) => t.key);
    expect(keys).not.toContain(EVACUATING_TAINT.key);
    expect(keys).not.toContain('kubevirt.io/drain');
    expect(os.servers().every((sv) => os.migrateCalls(sv.id) === 0)).toBe(true);
    const events = await s.k.request<KubeList<EventObject>>({ path: '/api/v1/namespaces/default/events' });
    const reasons = events.items.filter((e) => e.involvedObject.name === 'node-4').map((e) => e.reason);
    expect(reasons).toContain('EvacuationBlocked');
    expect(reasons).not.toContain('EvacuationStarted');

    // re-checked at resync: its host is listed again, and while the same workload blocks it the
    // record is left as it was (never Queued or Evacuating for a moment), still nothing changed
    const hostReads = () =>
      s.sandbox.openstack.requestLog.filter(
        (r) => r.path.includes('/servers/detail') && r.path.includes('host=node-4'),
      ).length;
    const read = hostReads();
    await until('looked at again at resync', () => (hostReads() >= read + 2 ? true : undefined));
    const again = await s.record('node-4');
    expect(again).toMatchObject({
      phase: 'Failed',
      failureReason: 'EvacuationBlocked',
      attemptedAt: blockedAt,
    });
    expect(os.service('node-4')?.status).toBe('enabled');
  });
});
