// What kubelets do to the fleet-real bench's objects, there being none: each Node's status report
// every 5 minutes, and a gate pod bound to a Node reported Running. These are the bench's own
// requests: each is logged (when, which verb and resource), so the bench takes them out of the API
// server's figures instead of counting them as the agents'.
import type { KubeClients, KubeRequest } from '../../src/kube/http.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { runWatch } from '../../src/kube/watch.ts';
import type { Logger } from '../../src/observability/logger.ts';

/** The kubelet's nodeStatusReportFrequency: an unchanged Node status is posted this often. */
export const STATUS_REPORT_MS = 300_000;

/** The bench's own requests (watches aside: the API server's request figures leave those out too). */
export class OwnRequests {
  readonly #k: KubeClients;
  readonly #log: { readonly at: number; readonly key: string }[] = [];

  constructor(k: KubeClients) {
    this.#k = k;
  }

  /** `key` as the API server's figures name it: "<verb> <resource>[/<subresource>]". */
  async request<T>(key: string, req: KubeRequest): Promise<T> {
    try {
      return await this.#k.request<T>(req);
    } finally {
      // answered or refused, the API server counted it (a connection that failed it did not: rare)
      this.#log.push({ at: Date.now(), key });
    }
  }

  /** How many were answered in [from, to), by key. */
  byKey(from: number, to: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.#log) if (r.at >= from && r.at < to) out[r.key] = (out[r.key] ?? 0) + 1;
    return out;
  }

  count(from: number, to: number): number {
    return Object.values(this.byKey(from, to)).reduce((a, b) => a + b, 0);
  }
}

/**
 * Each Node's status report every STATUS_REPORT_MS, the Nodes spread evenly over the period, as a
 * fleet of kubelets started at different times: a strategic merge patch of the Ready condition's
 * lastHeartbeatTime (the kubelet's own kind of write), until the signal aborts. Its status stays the
 * one the node lifecycle controller gave it (Unknown): a report of True would have that controller
 * mark it Unknown again 40 s later and change its taints, as no kubelet renews the Nodes' Leases here.
 */
export function statusReports(own: OwnRequests, nodes: readonly string[], signal: AbortSignal): void {
  nodes.forEach((name, i) => {
    const report = () =>
      void own
        .request('PATCH nodes/status', {
          method: 'PATCH',
          path: `/api/v1/nodes/${name}/status`,
          contentType: 'application/strategic-merge-patch+json',
          body: { status: { conditions: [{ type: 'Ready', lastHeartbeatTime: new Date().toISOString() }] } },
        })
        .catch(() => undefined); // a report lost is one a kubelet would send again
    let every: NodeJS.Timeout | undefined;
    const first = setTimeout(
      () => {
        report();
        every = setInterval(report, STATUS_REPORT_MS);
      },
      (i * STATUS_REPORT_MS) / nodes.length,
    );
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(first);
        clearInterval(every);
      },
      { once: true },
    );
  });
}

/**
 * A gate pod bound to one of the Nodes is reported Running and Ready once (one status write), so
 * each agent's drain gate comes to hold as on a node. Watches the namespace's pods until the signal aborts.
 */
export function gatePodsRunning(
  o: { k: KubeClients; own: OwnRequests; namespace: string; log: Logger },
  signal: AbortSignal,
): void {
  const done = new Set<string>();
  void runWatch<KubeObject>({
    k: o.k,
    path: `/api/v1/namespaces/${o.namespace}/pods`,
    signal,
    log: o.log,
    onEvent: (type, pod) => {
      const uid = pod.metadata.uid ?? '';
      const phase = (pod.status as { phase?: string } | undefined)?.phase;
      if (type === 'DELETED' || pod.metadata.deletionTimestamp || phase === 'Running' || done.has(uid))
        return;
      done.add(uid);
      const now = new Date().toISOString();
      void o.own
        .request('PATCH pods/status', {
          method: 'PATCH',
          path: `/api/v1/namespaces/${o.namespace}/pods/${pod.metadata.name}/status`,
          contentType: 'application/merge-patch+json',
          body: {
            status: {
              phase: 'Running',
              startTime: now,
              conditions: [
                { type: 'Initialized', status: 'True', lastTransitionTime: now },
                { type: 'Ready', status: 'True', lastTransitionTime: now },
                { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
                { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
              ],
              containerStatuses: [
                {
                  name: 'gate',
                  ready: true,
                  restartCount: 0,
                  image: 'gate',
                  imageID: '',
                  started: true,
                  state: { running: { startedAt: now } },
                },
              ],
            },
          },
        })
        .catch(() => done.delete(uid));
    },
  });
}
