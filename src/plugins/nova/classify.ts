// What to do with a server found on the host, from its status, task_state and lock.
import type { PlannedAction, PlannedWorkload } from '../../core/plugin.ts';
import { taskStateOf, type NovaServer } from './types.ts';

export type MoveAction = 'live-migrate' | 'cold-migrate' | 'confirm-resize';

export type Verdict =
  /** Start this now. */
  | { kind: 'move'; action: MoveAction }
  /** Already moving (someone, maybe an earlier us, started it): track it, never start another. */
  | { kind: 'in-progress'; action: 'live-migrate' | 'cold-migrate' }
  /** Busy with something else (reboot, snapshot …): look again on the next poll. */
  | { kind: 'wait'; reason: string }
  | { kind: 'blocked'; reason: string }
  | { kind: 'gone' };

const COLD_TASKS = new Set(['resize_prep', 'resize_migrating', 'resize_migrated', 'resize_finish']);
const BLOCKING_STATUS: Record<string, string> = {
  ERROR: 'server is in ERROR',
  SUSPENDED: 'server is SUSPENDED (resume it or migrate it by hand)',
  RESCUE: 'server is in RESCUE mode',
  SHELVED: 'server is SHELVED',
  SHELVED_OFFLOADED: 'server is SHELVED_OFFLOADED',
};
const BUSY_STATUS = new Set([
  'BUILD',
  'REBOOT',
  'HARD_REBOOT',
  'REBUILD',
  'PASSWORD',
  'RESIZE',
  'REVERT_RESIZE',
  'MIGRATING',
]);

export interface ClassifyOptions {
  coldMigrateStopped: boolean;
}

export function classify(server: NovaServer, opts: ClassifyOptions): Verdict {
  const status = server.status;
  if (status === 'DELETED' || status === 'SOFT_DELETED') return { kind: 'gone' };
  const task = taskStateOf(server);
  if (task === 'migrating') return { kind: 'in-progress', action: 'live-migrate' };
  if (task && COLD_TASKS.has(task)) return { kind: 'in-progress', action: 'cold-migrate' };
  if (task) return { kind: 'wait', reason: `busy: task_state ${task}` };
  if (server.locked) return { kind: 'blocked', reason: 'server is locked' };
  switch (status) {
    case 'ACTIVE':
    case 'PAUSED':
      return { kind: 'move', action: 'live-migrate' };
    case 'SHUTOFF':
      return opts.coldMigrateStopped
        ? { kind: 'move', action: 'cold-migrate' }
        : { kind: 'blocked', reason: 'server is SHUTOFF and nova.coldMigrateStopped is false' };
    case 'VERIFY_RESIZE':
      return { kind: 'move', action: 'confirm-resize' };
  }
  const blocking = BLOCKING_STATUS[status];
  if (blocking) return { kind: 'blocked', reason: blocking };
  if (BUSY_STATUS.has(status)) return { kind: 'wait', reason: `busy: status ${status}` };
  return { kind: 'blocked', reason: `status ${status} cannot be migrated` };
}

/** The plan line of a server: what evacuate would do with it. */
export function planWorkload(server: NovaServer, opts: ClassifyOptions): PlannedWorkload {
  const v = classify(server, opts);
  const base = {
    id: server.id,
    name: server.name,
    owner: server.tenant_id ?? '',
    state: taskStateOf(server) ? `${server.status} (${taskStateOf(server)})` : server.status,
  };
  let action: PlannedAction;
  switch (v.kind) {
    case 'move':
    case 'in-progress':
      action = v.action;
      break;
    case 'gone':
      action = 'skip';
      break;
    case 'wait':
      // It will move once the other task ends, if its status allows.
      if (server.status === 'ACTIVE' || server.status === 'PAUSED') action = 'live-migrate';
      else if (server.status === 'SHUTOFF' && opts.coldMigrateStopped) action = 'cold-migrate';
      else return { ...base, action: 'none', blocker: v.reason };
      break;
    case 'blocked':
      return { ...base, action: 'none', blocker: v.reason };
  }
  return { ...base, action };
}
