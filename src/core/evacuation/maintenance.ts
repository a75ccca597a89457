// The NodeMaintenance's status while an evacuation runs: the Running message and pod counts.
import { maintenanceStatus } from '../maintenance/maintenance-status.ts';
import { writeMaintenanceStatus } from '../maintenance/maintenance-sync.ts';
import { maintenanceRef, type MaintenanceObject } from '../cluster/objects.ts';
import type { NodeRecord } from '../record/record.ts';
import type { NodeRun } from '../agent/run-context.ts';

export const nmRef = (nm: MaintenanceObject | undefined) => (nm ? maintenanceRef(nm) : undefined);

export function podCounts(rec: NodeRecord | undefined) {
  const d = rec?.drain;
  return d ? { total: d.total, evicted: d.evicted, pending: d.failed.map((f) => f.pod) } : undefined;
}

export function running(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  message: string,
  pods?: { total: number; evicted: number; pending: string[] },
): Promise<void> {
  return writeMaintenanceStatus(
    run,
    nm,
    maintenanceStatus({
      phase: 'Running',
      reason: 'Evacuating',
      message,
      now: run.now(),
      ...(pods ? { pods } : {}),
    }),
  );
}
