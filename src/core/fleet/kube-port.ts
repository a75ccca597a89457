// The budget's FleetApi over src/kube: Leases in the fleet namespace, the queued Nodes (queue-read.ts),
// the DaemonSet's desiredNumberScheduled for percentage budgets; a slot holder's record, agent Lease
// and pod (holder-alive.ts).
import type { KubeClients } from '../../kube/client.ts';
import {
  agentCount,
  createLease,
  getLease,
  leasesPath,
  listLeases,
  replaceLease,
  type KubeLease,
} from '../../kube/lease.ts';
import { runWatch } from '../../kube/watch.ts';
import { isNotFoundError } from '../../errors.ts';
import type { BackoffOptions } from '../../kube/backoff.ts';
import type { Logger } from '../../observability/logger.ts';
import type { FleetApi, LeaseView } from './types.ts';
import { getNode } from '../../kube/node.ts';
import { NODE_LEASE_COMPONENT, nodeLeaseName } from '../agent/node-lease.ts';
import { readRecord, STATE_ANNOTATION } from '../record/record.ts';
import { kubeHolderPod } from './holder-pod.ts';
import { queuedAhead, queuedNodes } from './queue-read.ts';

const view = (l: KubeLease): LeaseView => ({
  name: l.metadata.name ?? '',
  ...(l.metadata.resourceVersion ? { resourceVersion: l.metadata.resourceVersion } : {}),
  ...(l.spec?.holderIdentity ? { holder: l.spec.holderIdentity } : {}),
  ...(l.spec?.leaseDurationSeconds !== undefined ? { durationSeconds: l.spec.leaseDurationSeconds } : {}),
  ...(l.spec?.acquireTime ? { acquireTime: l.spec.acquireTime } : {}),
  ...(l.spec?.renewTime ? { renewTime: l.spec.renewTime } : {}),
  ...(l.spec?.leaseTransitions !== undefined ? { transitions: l.spec.leaseTransitions } : {}),
  ...ours(l.metadata.annotations),
});

function ours(a: Record<string, string> | undefined): { annotations?: Record<string, string> } {
  const kept = Object.entries(a ?? {}).filter(([k]) => k.startsWith('drainer.dev/'));
  return kept.length ? { annotations: Object.fromEntries(kept) } : {};
}

const lease = (v: LeaseView, namespace: string, component: string): KubeLease => ({
  metadata: {
    name: v.name,
    namespace,
    labels: { 'app.kubernetes.io/name': 'drainer', 'app.kubernetes.io/component': component },
    ...(v.annotations ? { annotations: { ...v.annotations } } : {}),
    ...(v.resourceVersion ? { resourceVersion: v.resourceVersion } : {}),
  },
  spec: {
    ...(v.holder ? { holderIdentity: v.holder } : {}),
    ...(v.durationSeconds !== undefined ? { leaseDurationSeconds: v.durationSeconds } : {}),
    ...(v.acquireTime ? { acquireTime: v.acquireTime } : {}),
    ...(v.renewTime ? { renewTime: v.renewTime } : {}),
    ...(v.transitions !== undefined ? { leaseTransitions: v.transitions } : {}),
  },
});

export function kubeFleetApi(o: {
  k: KubeClients;
  namespace: string;
  daemonSet: string;
  log: Logger;
  watch?: { timeoutSeconds?: number; backoff?: BackoffOptions };
  /** The Leases' app.kubernetes.io/component label: fleet-slot, or node-agent for the per-node Lease. */
  component?: string;
}): FleetApi & { listLeases(): Promise<LeaseView[]> } {
  const { k, namespace } = o;
  const component = o.component ?? 'fleet-slot';
  const one = async (name: string): Promise<LeaseView | undefined> => {
    try {
      return view(await getLease(k, namespace, name));
    } catch (err) {
      if (isNotFoundError(err)) return undefined;
      throw err;
    }
  };
  return {
    getLease: one,
    createLease: async (v) => view(await createLease(k, namespace, lease(v, namespace, component))),
    replaceLease: async (v) => view(await replaceLease(k, namespace, lease(v, namespace, component))),
    async listLeases() {
      return (await listLeases(k, namespace, `app.kubernetes.io/component=${component}`)).map(view);
    },
    queuedNodes: () => queuedNodes(k),
    queuedAhead: (q) => queuedAhead(k, q),
    watchLeases(onEvent, onOpen, signal) {
      // a handful of objects: the watch brings them (no list), and after a 410 brings them again;
      // never the agents' node Leases, one per node, whose renewals would reach every waiter
      void runWatch<KubeLease>({
        k,
        path: leasesPath(namespace),
        query: { labelSelector: `app.kubernetes.io/component!=${NODE_LEASE_COMPONENT}` },
        watchFirst: true,
        onEvent: (type, l) => onEvent(type, view(l)),
        onOpen,
        signal,
        log: o.log,
        ...(o.watch?.timeoutSeconds ? { timeoutSeconds: o.watch.timeoutSeconds } : {}),
        ...(o.watch?.backoff ? { backoff: o.watch.backoff } : {}),
      });
    },
    agentCount: () => agentCount(k, namespace, o.daemonSet),
    async nodeRecord(node) {
      try {
        return readRecord((await getNode(k, node)).metadata.annotations?.[STATE_ANNOTATION]);
      } catch (err) {
        if (isNotFoundError(err)) return { kind: 'absent' };
        throw err;
      }
    },
    agentLease: (node) => one(nodeLeaseName(node)),
    holderPod: kubeHolderPod(k, namespace),
  };
}
