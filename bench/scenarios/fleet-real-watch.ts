// fleet-real's own watch of the fleet: each Node's phase from its record (when it queued, began and
// finished evacuating) and who holds each slot Lease (when a slot came free), and what a roll's
// figures read from them.
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import type { KubeNode, KubeObject } from '../../src/kube/types.ts';
import { runWatch } from '../../src/kube/watch.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { NS } from '../lib/fleet-cluster.ts';

interface Phase {
  phase: string;
  queuedAt?: number;
  queued: [number, number][];
  evacuating?: number;
  took?: number;
}

export class FleetWatch {
  readonly #phases: Map<string, Phase>;
  readonly #freed: number[] = [];
  readonly #began: number[] = [];
  #evacuating = 0;
  #maxEvacuating = 0;

  constructor(names: readonly string[]) {
    this.#phases = new Map(names.map((n) => [n, { phase: 'InService', queued: [] }]));
  }

  /** Opens the watches of the Nodes and of the slot Leases, until the signal aborts. */
  open(k: KubeClients, signal: AbortSignal, log: Logger): void {
    void runWatch<KubeNode>({
      k,
      path: '/api/v1/nodes',
      signal,
      log,
      onEvent: (_t, n) => this.#onNode(n),
    });
    const holders = new Map<string, string>();
    void runWatch<KubeObject & { spec?: { holderIdentity?: string } }>({
      k,
      path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
      signal,
      log,
      onEvent: (type, l) => {
        const name = l.metadata.name ?? '';
        if (!name.startsWith('drainer-evacuation-')) return;
        const holder = type === 'DELETED' ? '' : (l.spec?.holderIdentity ?? '');
        if (holders.get(name) && !holder) this.#freed.push(Date.now());
        holders.set(name, holder);
      },
    });
  }

  #onNode(n: KubeNode): void {
    const p = this.#phases.get(n.metadata.name ?? '');
    if (!p) return;
    const next = parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.phase ?? 'InService';
    if (next === p.phase) return;
    const now = Date.now();
    if (p.phase === 'Queued' && p.queuedAt !== undefined) p.queued.push([p.queuedAt, now]);
    if (p.phase === 'Evacuating') {
      this.#evacuating--;
      if (p.evacuating !== undefined) p.took = now - p.evacuating;
    }
    if (next === 'Queued') p.queuedAt = now;
    if (next === 'Evacuating') {
      p.evacuating = now;
      this.#began.push(now);
      this.#evacuating++;
      this.#maxEvacuating = Math.max(this.#maxEvacuating, this.#evacuating);
    }
    p.phase = next;
  }

  /** Every node Evacuated or Failed. */
  settled(): boolean {
    return [...this.#phases.values()].every((x) => x.phase === 'Evacuated' || x.phase === 'Failed');
  }

  evacuated(): number {
    return [...this.#phases.values()].filter((x) => x.phase === 'Evacuated').length;
  }

  /** The most nodes evacuating at once. */
  get maxEvacuating(): number {
    return this.#maxEvacuating;
  }

  /** How long each node that finished an evacuation took (ms). */
  took(): number[] {
    return [...this.#phases.values()].map((x) => x.took ?? 0).filter((t) => t > 0);
  }

  /** The time nodes spent queued (ms), the requests their agents made meanwhile, and how many nodes queued. */
  queued(requests: Record<string, number[]>): { ms: number; requests: number; nodes: number } {
    let ms = 0;
    let made = 0;
    for (const [n, x] of this.#phases) {
      for (const [a, z] of x.queued) {
        ms += z - a;
        made += (requests[n] ?? []).filter((t) => t >= a && t < z).length;
      }
    }
    const nodes = [...this.#phases.values()].filter((x) => x.queued.length > 0).length;
    return { ms, requests: made, nodes };
  }

  /** Each start after the first `budget` follows a slot freed before it (first freed, first taken): how long after. */
  handoffs(budget: number): number[] {
    const handoffs: number[] = [];
    const frees = [...this.#freed].sort((a, b) => a - b);
    for (const t of this.#began.slice(budget).sort((a, b) => a - b)) {
      const f = frees.findIndex((x) => x <= t);
      if (f >= 0) handoffs.push(t - frees.splice(f, 1)[0]!);
    }
    return handoffs;
  }
}
