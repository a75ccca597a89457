// The AGENT column of `drainer status`: the agents' node Leases, read once (one-shot) or kept by a
// watch (--watch). Where they cannot be read (no rights there) there is no AGENT column.
import { agentStates, type AgentState } from '../core/fleet/fleet-view.ts';
import { NODE_LEASE_COMPONENT } from '../core/agent/node-lease.ts';
import type { KubeClients } from '../kube/client.ts';
import { leasesPath, listLeases, type KubeLease } from '../kube/lease.ts';
import { runWatch } from '../kube/watch.ts';
import type { cliLogger } from './context.ts';

type Log = ReturnType<typeof cliLogger>;
interface AgentFleet {
  readonly namespace: string;
  readonly agentLeaseDuration: number;
}

const SELECTOR = `app.kubernetes.io/component=${NODE_LEASE_COMPONENT}`;

function statesOf(leases: Iterable<KubeLease>, now: Date, fleet: AgentFleet): Map<string, AgentState> {
  const views = [...leases].map((l) => ({
    name: l.metadata.name ?? '',
    ...(l.spec?.holderIdentity ? { holder: l.spec.holderIdentity } : {}),
    ...(l.spec?.renewTime ? { renewTime: l.spec.renewTime } : {}),
    ...(l.spec?.acquireTime ? { acquireTime: l.spec.acquireTime } : {}),
    ...(l.spec?.leaseDurationSeconds !== undefined ? { durationSeconds: l.spec.leaseDurationSeconds } : {}),
  }));
  return agentStates(views, now, fleet.agentLeaseDuration);
}

/** The agents' node Leases (one list); none when they cannot be read: no AGENT column. */
export async function agentsOf(
  k: KubeClients,
  fleet: AgentFleet,
  now: Date,
  log: Log,
): Promise<Map<string, AgentState> | undefined> {
  try {
    return statesOf(await listLeases(k, fleet.namespace, SELECTOR), now, fleet);
  } catch (err) {
    log.debug({ err }, 'agent Leases not read: no AGENT column');
    return undefined;
  }
}

/** --watch: the agents as of `now` from a Lease watch, or none (no AGENT column) when unreadable. */
export interface AgentWatch {
  states(now: Date): Map<string, AgentState> | undefined;
  /** The first list (before the first draw, so the column is there from the start). */
  load(): Promise<void>;
  /** Runs until the signal aborts, calling onChange on each Lease change; at once when unreadable. */
  run(): Promise<void>;
}

export function watchAgents(
  k: KubeClients,
  fleet: AgentFleet,
  log: Log,
  signal: AbortSignal,
  onChange: () => void,
): AgentWatch {
  const leases = new Map<string, KubeLease>();
  let readable = false;
  return {
    states: (now) => (readable ? statesOf(leases.values(), now, fleet) : undefined),
    async load() {
      // without the rights to read Leases: no column, and no watch that retries forever
      try {
        for (const l of await listLeases(k, fleet.namespace, SELECTOR)) leases.set(l.metadata.name ?? '', l);
        readable = true;
      } catch (err) {
        log.debug({ err }, 'agent Leases not read: no AGENT column');
      }
    },
    async run() {
      if (!readable) return;
      await runWatch<KubeLease>({
        k,
        path: leasesPath(fleet.namespace),
        query: { labelSelector: SELECTOR },
        signal,
        log,
        onEvent: (type, lease) => {
          const name = lease.metadata.name ?? '';
          if (type === 'DELETED') leases.delete(name);
          else leases.set(name, lease);
          onChange();
        },
      });
    },
  };
}
