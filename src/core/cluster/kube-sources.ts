// The agent's watches on a real API server: its own Node (fieldSelector metadata.name) and the
// NodeMaintenances of every group whose CRD is installed. A group that is absent has its CRD watched
// (crd-appears.ts), and is watched itself once it appears; it never holds readiness back.
import type { KubeClients } from '../../kube/client.ts';
import { backoffDelay, sleep, type BackoffOptions } from '../../kube/backoff.ts';
import { listNodeMaintenances, maintenancePath, NODE_MAINTENANCE_GROUPS } from '../../kube/maintenance.ts';
import type { KubeNode, NodeMaintenance } from '../../kube/types.ts';
import { runWatch } from '../../kube/watch.ts';
import { waitForCrd } from './crd-appears.ts';
import type { Logger } from '../../observability/logger.ts';
import type { WatchSources } from '../agent/agent.ts';
import type { MaintenanceObject } from './objects.ts';

export interface KubeSourceOptions {
  readonly k: KubeClients;
  readonly nodeName: string;
  readonly log: Logger;
  /** Server-side watch timeout (default 300 s). */
  readonly timeoutSeconds?: number;
  readonly backoff?: BackoffOptions;
  /**
   * An absent NodeMaintenance group's CRD is watched by name, and seen the moment it is installed.
   * Without the right to read CRDs (an older ClusterRole), the group is listed again this often
   * (default 10 min): one list per absent group per agent, which at a minute was most of an idle
   * fleet's requests (issue 38).
   */
  readonly recheckMs?: number;
  /** The absent CRD's watch timeout (default 30 min: one request per absent group per half hour). */
  readonly crdWatchTimeoutSeconds?: number;
  /** Between a CRD established and its resource served (default 1 s). */
  readonly crdSettleMs?: number;
}

/** Without the right to watch CRDs, an absent NodeMaintenance group is listed again this often. */
const ABSENT_GROUP_RECHECK_MS = 600_000;

export function kubeWatchSources(o: KubeSourceOptions): WatchSources {
  const common = {
    k: o.k,
    log: o.log,
    ...(o.timeoutSeconds ? { timeoutSeconds: o.timeoutSeconds } : {}),
    ...(o.backoff ? { backoff: o.backoff } : {}),
  };
  return {
    watchNode: (cb) =>
      runWatch<KubeNode>({
        ...common,
        path: '/api/v1/nodes',
        query: { fieldSelector: `metadata.name=${o.nodeName}` },
        signal: cb.signal,
        onEvent: (type, node) => cb.onEvent(type, node),
        onSynced: () => cb.onSynced(),
      }),
    watchMaintenances: async (cb) => {
      const missing = await presentGroups(o, cb.signal);
      if (!missing) return;
      const synced = new Set<string>();
      const required = NODE_MAINTENANCE_GROUPS.filter((g) => !missing.includes(g));
      if (required.length === 0) cb.onSynced();
      await Promise.all(
        NODE_MAINTENANCE_GROUPS.map(async (group) => {
          if (missing.includes(group) && !(await waitForGroup(o, group, cb.signal))) return;
          await runWatch<NodeMaintenance>({
            ...common,
            path: maintenancePath(group),
            signal: cb.signal,
            onEvent: (type, nm) => cb.onEvent(type, withKind(nm, group)),
            onSynced: () => {
              synced.add(group);
              if (required.every((g) => synced.has(g))) cb.onSynced();
            },
          });
        }),
      );
    },
  };
}

const withKind = (nm: NodeMaintenance, group: string): MaintenanceObject => ({
  ...nm,
  apiVersion: `${group}/v1beta1`,
  kind: 'NodeMaintenance',
});

/** Groups absent at start (retried until the API answers); undefined when the signal aborted. */
async function presentGroups(o: KubeSourceOptions, signal: AbortSignal): Promise<string[] | undefined> {
  for (let failures = 1; !signal.aborted; failures++) {
    try {
      return (await listNodeMaintenances(o.k, { log: o.log, signal })).missingGroups;
    } catch (err) {
      if (signal.aborted) break;
      const delay = backoffDelay(failures, o.backoff);
      o.log.warn({ err, retryInMs: delay }, 'cannot list NodeMaintenances: retrying');
      await sleep(delay, signal).catch(() => undefined);
    }
  }
  return undefined;
}

/** Resolves true once the group's CRD is installed, false when the signal aborted. */
async function waitForGroup(o: KubeSourceOptions, group: string, signal: AbortSignal): Promise<boolean> {
  const appeared = await waitForCrd({
    k: o.k,
    log: o.log,
    crd: `nodemaintenances.${group}`,
    served: async (s) =>
      (await listNodeMaintenances(o.k, { groups: [group], signal: s })).missingGroups.length === 0,
    fallbackMs: o.recheckMs ?? ABSENT_GROUP_RECHECK_MS,
    ...(o.crdWatchTimeoutSeconds ? { timeoutSeconds: o.crdWatchTimeoutSeconds } : {}),
    ...(o.crdSettleMs !== undefined ? { settleMs: o.crdSettleMs } : {}),
    signal,
  });
  if (appeared) o.log.info({ group }, 'NodeMaintenance CRD appeared: watching it');
  return appeared;
}
