// NodeMaintenance status as medik8s defines it (phase, drainProgress, lastUpdate, lastError,
// pendingPods, totalpods, evictionPods) plus one condition, so `kubectl get nm` tools keep working.
import type { MaintenanceStatus } from '../cluster/objects.ts';

export type MaintenancePhase = 'Running' | 'Succeeded' | 'Failed';

/** Condition reasons; "Invalid*" mark CRs drainer refuses to act on. */
export type ConditionReason =
  | 'Evacuating'
  | 'Queued'
  | 'Evacuated'
  | 'EvacuationFailed'
  | 'InsufficientCapacity'
  | 'EvacuationBlocked'
  | 'CloudAuthFailed'
  | 'InvalidNodeNotFound'
  | 'InvalidDuplicate'
  | 'InvalidNodeNameChanged';

export interface PodCounts {
  readonly total: number;
  readonly evicted: number;
  readonly pending: readonly string[];
}

export function maintenanceStatus(opts: {
  phase: MaintenancePhase;
  reason: ConditionReason;
  message: string;
  now: Date;
  lastError?: string;
  pods?: PodCounts;
}): MaintenanceStatus {
  const { phase, now, pods } = opts;
  const at = now.toISOString();
  const progress =
    phase === 'Succeeded' ? 100 : pods && pods.total > 0 ? Math.floor((pods.evicted * 100) / pods.total) : 0;
  return {
    phase,
    drainProgress: progress,
    lastUpdate: at,
    lastError: opts.lastError ?? '',
    pendingPods: pods ? [...pods.pending] : [],
    totalpods: pods?.total ?? 0,
    evictionPods: pods?.evicted ?? 0,
    conditions: [
      {
        type: 'Evacuated',
        status: phase === 'Succeeded' ? 'True' : 'False',
        reason: opts.reason,
        message: opts.message,
        lastTransitionTime: at,
      },
    ],
  };
}

/** Succeeded always means evacuated: the VMs moved (and, when counted, the pods). */
export const evacuatedMaintenance = (message: string, now: Date, pods?: PodCounts): MaintenanceStatus =>
  maintenanceStatus({ phase: 'Succeeded', reason: 'Evacuated', message, now, pods });

export const invalidMaintenance = (
  reason: Extract<ConditionReason, `Invalid${string}`>,
  message: string,
  now: Date,
): MaintenanceStatus => maintenanceStatus({ phase: 'Failed', reason, message, now, lastError: message });

/** True when the status already says this failure (no need to write it again). */
export const alreadyFailedWith = (status: MaintenanceStatus | undefined, message: string): boolean =>
  status?.phase === 'Failed' && status.lastError === message;
