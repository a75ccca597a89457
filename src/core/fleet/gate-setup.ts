// Builds the start gate from fleet.* config: the calendar, the shared Prometheus verdict (on the
// Lease watch the budget keeps) and the pod blocker. Undefined when nothing could hold a start.
import type { Config } from '../../config/schema.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { Logger } from '../../observability/logger.ts';
import type { LeaseCache } from './lease-cache.ts';
import { kubePodBlocker } from './pod-blocker.ts';
import { firingAlerts } from './prometheus.ts';
import { SharedVerdict } from './shared-verdict.ts';
import { FleetStartGate, gateConfigured } from './start-gate.ts';
import type { FleetApi, GateState } from './types.ts';

export interface GateSetup {
  readonly config: Config;
  readonly k: KubeClients;
  readonly nodeName: string;
  readonly api: FleetApi;
  readonly cache: LeaseCache;
  readonly log: Logger;
  readonly now: () => Date;
  readonly maxSleepMs?: number;
  readonly onQuery?: () => void;
  readonly onState?: (s: GateState) => void;
}

export function createStartGate(o: GateSetup): FleetStartGate | undefined {
  const fleet = o.config.fleet;
  if (!gateConfigured(fleet, fleet.blockers)) return undefined;
  const intervalMs = fleet.blockers.interval * 1000;
  const prom = fleet.blockers.prometheus;
  return new FleetStartGate({
    calendar: fleet,
    intervalMs,
    now: o.now,
    ...(o.maxSleepMs ? { maxSleepMs: o.maxSleepMs } : {}),
    ...(o.onState ? { onState: o.onState } : {}),
    ...(prom
      ? {
          prometheus: new SharedVerdict({
            api: o.api,
            cache: o.cache,
            // not the node's name: the budget counts Lease holders as nodes that took a slot
            identity: `blocker-check/${o.nodeName}`,
            intervalMs,
            settleMs: (prom.requestTimeout + 2) * 1000,
            ask: (signal) => firingAlerts(prom, signal),
            now: o.now,
            log: o.log,
            ...(o.onQuery ? { onQuery: o.onQuery } : {}),
          }),
        }
      : {}),
    ...(fleet.blockers.podSelector
      ? { pods: kubePodBlocker(o.k, fleet.blockers.podSelector), podSelector: fleet.blockers.podSelector }
      : {}),
  });
}
