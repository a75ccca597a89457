// The budget's FleetApi over src/kube: Leases in the fleet namespace, the queued Nodes (by label),
// the DaemonSet's desiredNumberScheduled for percentage budgets.
import type { KubeClients } from '../../kube/client.ts';
import {
  agentCount,
  createLease,
  getLease,
  leasesPath,
  listLeases,
  listQueuedNodes,
  listQueuedPage,
  QUEUED_LABEL,
  replaceLease,
  type KubeLease,
} from '../../kube/lease.ts';
import { runWatch } from '../../kube/watch.ts';
import { isNotFoundError } from '../../errors.ts';
import type { BackoffOptions } from '../../kube/backoff.ts';
import type { Logger } from '../../observability/logger.ts';
import type { FleetApi, LeaseView } from './types.ts';
import { NODE_LEASE_COMPONENT } from '../agent/node-lease.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';
import type { KubeNode } from '../../kube/types.ts';

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

/**
 * How far back a waiter looks for the nodes queued just before it, widening until more than a page
 * are there: 1 s holds a page when a rack was cordoned at once; an hour, a queue filled slowly.
 */
const QUEUE_WINDOW_MS = [1_000, 4_000, 16_000, 64_000, 256_000, 1_024_000, 3_600_000];

// a node held at the start gate (window, freeze, blocker) keeps its label and place, but is not
// ahead of anyone: a node past the gate (a blocker elsewhere cleared, --now) goes on
const heldAtGate = (n: KubeNode): boolean =>
  parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.waiting !== undefined;

const queued = (n: KubeNode): { node: string; since: number } => ({
  node: n.metadata.name ?? '',
  since: Number(n.metadata.labels?.[QUEUED_LABEL] ?? 0),
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
  return {
    async getLease(name) {
      try {
        return view(await getLease(k, namespace, name));
      } catch (err) {
        if (isNotFoundError(err)) return undefined;
        throw err;
      }
    },
    createLease: async (v) => view(await createLease(k, namespace, lease(v, namespace, component))),
    replaceLease: async (v) => view(await replaceLease(k, namespace, lease(v, namespace, component))),
    async listLeases() {
      return (await listLeases(k, namespace, `app.kubernetes.io/component=${component}`)).map(view);
    },
    async queuedNodes() {
      return (await listQueuedNodes(k)).filter((n) => !heldAtGate(n)).map(queued);
    },
    async queuedAhead({ node, since, want }) {
      // ahead: queued before this node, or at the same time with a smaller name (hence `< since + 1`);
      // neither this node nor one held at the gate is
      const ahead = (items: readonly KubeNode[]) =>
        items
          .filter((x) => !heldAtGate(x))
          .map(queued)
          .filter((n) => n.since < since || (n.since === since && n.node < node))
          .map((n) => n.node);
      const whole = async () => ({
        nodes: ahead((await listQueuedPage(k, { before: since + 1, cached: true })).items),
        more: false,
      });
      if (want === undefined) return whole();
      // the nodes queued just before this one, from the API server's cache: in a roll they are many
      const near = async (ms: number) =>
        ahead((await listQueuedPage(k, { after: since - ms, before: since + 1, cached: true })).items);
      const close = await near(QUEUE_WINDOW_MS[0] ?? 1_000);
      if (close.length > want) return { nodes: close, more: true };
      // a page from etcd, read only until it is full (want + 1 ahead, and this node): a queue no
      // longer than a page is read whole. The API server gives a continue token whenever Nodes are
      // left unread, matching or not: only a page with more than `want` ahead is a long queue
      const page = await listQueuedPage(k, { before: since + 1, limit: want + 2 });
      const first = ahead(page.items);
      if (!page.metadata.continue) return { nodes: first, more: false };
      if (first.length <= want) return whole();
      for (const ms of QUEUE_WINDOW_MS.slice(1)) {
        const nodes = await near(ms);
        if (nodes.length > want) return { nodes, more: true };
      }
      return whole();
    },
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
  };
}
