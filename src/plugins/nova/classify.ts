// What to do with a server found on the host, from its status, task_state and lock, and the way
// out its owner chose (policy.ts), the node's reboot declaration and nova.onError.
import type { PlannedAction, PlannedWorkload } from '../../core/backends/plugin.ts';
import { REBOOT_KEY } from '../../names.ts';
import { chosenWay, type Way } from './policy.ts';
import { novaPresence, presenceField } from '../on-host.ts';
import { taskStateOf, type NovaServer } from './types.ts';

/** 'stop': os-stop on the host (way stop, on a declared reboot); the server stays there. */
export type MoveAction = 'live-migrate' | 'cold-migrate' | 'confirm-resize' | 'stop';

export type Verdict =
  /** Start this now. */
  | { kind: 'move'; action: MoveAction; last?: boolean }
  /** Stays on the host by choice (way stop on a declared reboot, nova.onError skip): not a failure. */
  | { kind: 'stays'; reason: string }
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
  /** A server in ERROR: block (default), last, skip. */
  onError?: 'block' | 'last' | 'skip';
  /** The maintenance is declared a reboot (node drainer.dev/reboot=true): a stopped server may stay. */
  reboot?: boolean;
  /** The way out to apply (default: the server's own; notify resolved by the caller). */
  way?: Way;
}

const NOT_REBOOT =
  `way out "stop" keeps the server on the host, which counts as not evacuated unless the maintenance ` +
  `is declared a reboot (node annotation or label ${REBOOT_KEY}=true)`;

export function classify(server: NovaServer, opts: ClassifyOptions): Verdict {
  const status = server.status;
  if (status === 'DELETED' || status === 'SOFT_DELETED') return { kind: 'gone' };
  const task = taskStateOf(server);
  if (task === 'migrating') return { kind: 'in-progress', action: 'live-migrate' };
  if (task && COLD_TASKS.has(task)) return { kind: 'in-progress', action: 'cold-migrate' };
  if (task) return { kind: 'wait', reason: `busy: task_state ${task}` };
  if (server.locked) return { kind: 'blocked', reason: 'server is locked' };
  if (status === 'ERROR' && opts.onError === 'skip')
    return { kind: 'stays', reason: 'in ERROR: left on the host (nova.onError skip)' };
  // Nova refuses migrate on ERROR (409) unless its state is reset: tried anyway, after the rest
  if (status === 'ERROR' && opts.onError === 'last')
    return { kind: 'move', action: 'cold-migrate', last: true };
  const chosen = chosenWay(server);
  if ('invalid' in chosen) return { kind: 'blocked', reason: chosen.invalid };
  const way = opts.way ?? chosen.way;
  if (way === 'cold' || way === 'stop') return byOwnerWay(server, way, opts);
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

/**
 * The owner chose cold or stop. Cold: Nova's migrate of an ACTIVE server is itself "stop, move,
 * start": the guest is powered off, moved, and already runs on the new host at VERIFY_RESIZE
 * (finish_resize powers it on unless it was STOPPED); the confirm only frees the old host. Stop: stopped on the host, which is only safe on a declared reboot.
 */
function byOwnerWay(server: NovaServer, way: 'cold' | 'stop', opts: ClassifyOptions): Verdict {
  const status = server.status;
  if (status === 'VERIFY_RESIZE') return { kind: 'move', action: 'confirm-resize' };
  if (way === 'stop' && !opts.reboot) return { kind: 'blocked', reason: NOT_REBOOT };
  if (status === 'ACTIVE') return { kind: 'move', action: way === 'cold' ? 'cold-migrate' : 'stop' };
  if (status === 'SHUTOFF')
    return way === 'cold'
      ? { kind: 'move', action: 'cold-migrate' }
      : { kind: 'stays', reason: 'SHUTOFF: stays on the host for the declared reboot' };
  const blocking = BLOCKING_STATUS[status];
  if (blocking) return { kind: 'blocked', reason: blocking };
  if (BUSY_STATUS.has(status)) return { kind: 'wait', reason: `busy: status ${status}` };
  return { kind: 'blocked', reason: `way out "${way}" needs the server ACTIVE or SHUTOFF, not ${status}` };
}

export interface PlanWayOptions extends ClassifyOptions {
  /** nova.notifyTimeout, seconds. */
  notifyTimeout: number;
}

/** The plan line of a server: what evacuate would do with it, and why. */
export function planWorkload(server: NovaServer, opts: PlanWayOptions): PlannedWorkload {
  const chosen = chosenWay(server);
  if ('way' in chosen && chosen.way === 'notify' && opts.way === undefined && server.status !== 'ERROR') {
    const { blocker, ...then } = planWorkload(server, { ...opts, way: 'live' });
    const after = blocker ? `is blocked: ${blocker}` : `takes the default way (${then.action})`;
    return {
      ...then,
      action: 'notify',
      why: `${chosen.why}: its owner is asked to move it; after nova.notifyTimeout (${opts.notifyTimeout}s) it ${after}`,
    };
  }
  const way = opts.way ?? ('way' in chosen ? chosen.way : undefined);
  const line = planLine(server, opts, way);
  return { ...line, why: line.why ?? whyOf(server, line.action, chosen.why, way, opts) };
}

function whyOf(
  server: NovaServer,
  action: PlannedAction,
  chosen: string,
  way: Way | undefined,
  opts: PlanWayOptions,
): string {
  if (server.status === 'ERROR' && opts.onError === 'last')
    return 'in ERROR, nova.onError last: tried after the others with a cold migration (Nova refuses it while the state is ERROR)';
  if (action === 'none' || action === 'skip') return chosen;
  if (way === 'cold' && server.status === 'ACTIVE')
    return `${chosen}: Nova stops it, moves it and starts it on the new host; drainer then confirms the resize, which frees the old host`;
  if (way === 'stop')
    return `${chosen}: stopped on the host for the declared reboot, started again on restore`;
  return chosen;
}

function planLine(server: NovaServer, opts: ClassifyOptions, way: Way | undefined): PlannedWorkload {
  const v = classify(server, opts);
  const base = {
    id: server.id,
    name: server.name,
    owner: server.tenant_id ?? '',
    state: taskStateOf(server) ? `${server.status} (${taskStateOf(server)})` : server.status,
    ...presenceField(novaPresence(server.status)),
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
    case 'stays':
      return { ...base, action: 'skip', why: v.reason };
    case 'wait':
      // It will move once the other task ends, if its status allows; a `stop` one is stopped then
      // (busy powering off or on included), and only on a declared reboot.
      if (way === 'stop') {
        if (!opts.reboot) return { ...base, action: 'none', blocker: NOT_REBOOT };
        action = 'stop';
      } else if (way === 'cold') action = 'cold-migrate';
      else if (server.status === 'ACTIVE' || server.status === 'PAUSED') action = 'live-migrate';
      else if (server.status === 'SHUTOFF' && opts.coldMigrateStopped) action = 'cold-migrate';
      else return { ...base, action: 'none', blocker: v.reason };
      break;
    case 'blocked':
      return { ...base, action: 'none', blocker: v.reason };
  }
  return { ...base, action };
}
