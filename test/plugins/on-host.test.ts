// The one definition of what is on a host (issue 52 item 2): which Nova states and VMI phases put a
// VM there, running or stopped, and how every command counts and words it.
import { describe, expect, it } from 'vitest';
import { countItems, countPlans, vmsText } from '../../src/core/backends/vm-count.ts';
import type { Classified } from '../../src/plugins/kubevirt/classify.ts';
import { stopProgress } from '../../src/plugins/kubevirt/stopping.ts';
import { novaPresence, vmiPresence } from '../../src/plugins/on-host.ts';
import { planWorkload } from '../../src/plugins/nova/classify.ts';
import type { NovaServer } from '../../src/plugins/nova/types.ts';

describe('what is on a host', () => {
  it('a stopped Nova server is on its host, an offloaded or deleted one is not', () => {
    expect(['ACTIVE', 'PAUSED', 'ERROR', 'VERIFY_RESIZE', 'MIGRATING'].map(novaPresence)).toEqual(
      Array(5).fill('running'),
    );
    expect(['SHUTOFF', 'SHELVED', 'SUSPENDED'].map(novaPresence)).toEqual(Array(3).fill('stopped'));
    expect(['SHELVED_OFFLOADED', 'DELETED', 'SOFT_DELETED'].map(novaPresence)).toEqual(Array(3).fill('gone'));
  });

  it('a VMI is on its node from Scheduled until it is over; Unknown counts (the guest may run)', () => {
    expect(['Scheduled', 'Running', 'Unknown', undefined].map(vmiPresence)).toEqual(Array(4).fill('running'));
    expect(['Pending', 'Scheduling', 'Succeeded', 'Failed'].map(vmiPresence)).toEqual(Array(4).fill('gone'));
  });

  it("the plan's line of a SHUTOFF server says stopped, whatever drainer does with it", () => {
    const server = { id: 's1', name: 'db', status: 'SHUTOFF', tenant_id: 'p' } as NovaServer;
    const opts = { coldMigrateStopped: false, notifyTimeout: 60 };
    expect(planWorkload(server, opts)).toMatchObject({ action: 'none', presence: 'stopped' });
    expect(planWorkload({ ...server, status: 'ACTIVE' }, opts).presence).toBeUndefined();
  });

  it('counts and words them: "N VMs (of them M stopped)"', () => {
    const plan = {
      plugin: 'nova',
      workloads: [
        { id: '1', name: 'a', owner: 'p', state: 'ACTIVE', action: 'live-migrate' as const },
        {
          id: '2',
          name: 'b',
          owner: 'p',
          state: 'SHUTOFF',
          action: 'skip' as const,
          presence: 'stopped' as const,
        },
        {
          id: '3',
          name: 'c',
          owner: 'p',
          state: 'DELETED',
          action: 'skip' as const,
          presence: 'gone' as const,
        },
      ],
    };
    const n = countPlans([plan]);
    expect(n).toEqual({ names: ['nova/a', 'nova/b'], stopped: 1 });
    expect(vmsText(n.names.length, n.stopped)).toBe('2 VMs (of them 1 stopped)');
    expect(vmsText(1, 0)).toBe('1 VM');
    expect(vmsText(2, 1, 'nova/a, nova/b')).toBe('2 VMs (of them 1 stopped: nova/a, nova/b)');
    expect(vmsText(2, 0, 'nova/a, nova/b')).toBe('2 VMs (nova/a, nova/b)');
  });

  it('a VMI drainer stopped has left the node; one it could not stop is still there', () => {
    const c = (name: string) =>
      ({ key: `vms/${name}`, action: 'shutdown', vmi: { metadata: { name } } }) as Classified;
    const items = stopProgress(
      [c('off'), c('stuck')],
      new Set(['vms/stuck']),
      0,
      { node: 'n', now: () => 1 },
      {
        failed: () => 'still running',
        stopped: () => 'stopped',
      },
    );
    expect(countItems(items)).toEqual({ onHost: 1, stopped: 0 });
  });
});
