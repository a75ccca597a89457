import { describe, expect, it } from 'vitest';
import { classify, planWorkload } from '../../../src/plugins/nova/classify.ts';
import type { NovaServer } from '../../../src/plugins/nova/types.ts';

const server = (status: string, task: string | null = null, extra: Partial<NovaServer> = {}): NovaServer => ({
  id: 'id-1',
  name: 'vm',
  status,
  tenant_id: 'p1',
  'OS-EXT-STS:task_state': task,
  'OS-EXT-SRV-ATTR:host': 'h',
  ...extra,
});
const on = { coldMigrateStopped: true, notifyTimeout: 60 };

describe('classify', () => {
  it.each([
    ['ACTIVE', null, { kind: 'move', action: 'live-migrate' }],
    ['PAUSED', null, { kind: 'move', action: 'live-migrate' }],
    ['SHUTOFF', null, { kind: 'move', action: 'cold-migrate' }],
    ['VERIFY_RESIZE', null, { kind: 'move', action: 'confirm-resize' }],
    ['MIGRATING', 'migrating', { kind: 'in-progress', action: 'live-migrate' }],
    ['RESIZE', 'resize_migrating', { kind: 'in-progress', action: 'cold-migrate' }],
    ['ACTIVE', 'image_snapshot', { kind: 'wait', reason: 'busy: task_state image_snapshot' }],
    ['REBOOT', null, { kind: 'wait', reason: 'busy: status REBOOT' }],
    ['ERROR', null, { kind: 'blocked', reason: 'server is in ERROR' }],
    ['SHELVED_OFFLOADED', null, { kind: 'blocked', reason: 'server is SHELVED_OFFLOADED' }],
    ['SOFT_DELETED', null, { kind: 'gone' }],
  ])('%s / task %s → %o', (status, task, verdict) => {
    expect(classify(server(status, task), on)).toEqual(verdict);
  });

  it('blocks locked servers but still tracks one that is already migrating', () => {
    expect(classify(server('ACTIVE', null, { locked: true }), on)).toEqual({
      kind: 'blocked',
      reason: 'server is locked',
    });
    expect(classify(server('MIGRATING', 'migrating', { locked: true }), on).kind).toBe('in-progress');
  });

  it('plans a busy ACTIVE server as a live migration and a stopped one as a blocker when cold migration is off', () => {
    expect(planWorkload(server('ACTIVE', 'rebooting'), on)).toMatchObject({
      action: 'live-migrate',
      state: 'ACTIVE (rebooting)',
      owner: 'p1',
    });
    expect(planWorkload(server('SHUTOFF'), { coldMigrateStopped: false, notifyTimeout: 60 })).toMatchObject({
      action: 'none',
      blocker: expect.stringMatching(/coldMigrateStopped/),
    });
  });
});
