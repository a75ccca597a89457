// Each node's drain gate as the API server showed it, on its clock: the spans in which one of the
// node's gate pods (its own or a spare) was Running, Ready and not being deleted. The soak asks it
// when a gate held again after an operator's release ended with its maintenance (check.ts).
import { GATE_NODE_LABEL, gateLabelValue } from '../../src/kube/gate.ts';

interface PodLike {
  metadata: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
  };
  status?: unknown;
}

/** What the watcher needs of the sandbox: its store's changes and its clock. */
export interface GateSource {
  subscribe(res: string, cb: (type: string, obj: PodLike) => void): () => void;
  now(): number;
}

const holds = (type: string, p: PodLike): boolean => {
  if (type === 'DELETED' || p.metadata.deletionTimestamp) return false;
  const s = p.status as { phase?: string; conditions?: { type: string; status: string }[] } | undefined;
  return (
    s?.phase === 'Running' && (s.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
};

export class GateWatch {
  readonly #now: () => number;
  readonly #namespace: string;
  /** Gate label value → node. */
  readonly #nodes: Map<string, string>;
  /** Per node, its gate pods that hold now. */
  readonly #holding = new Map<string, Set<string>>();
  /** Per node, the spans in which its gate held (until absent: it holds now). */
  readonly #spans = new Map<string, { from: number; until?: number }[]>();
  readonly #off: () => void;

  constructor(source: GateSource, o: { namespace: string; nodes: readonly string[] }) {
    this.#now = () => source.now();
    this.#namespace = o.namespace;
    this.#nodes = new Map(o.nodes.map((n) => [gateLabelValue(n), n]));
    this.#off = source.subscribe('pods', (type, p) => this.#pod(type, p));
  }

  #pod(type: string, p: PodLike): void {
    if (p.metadata.namespace !== this.#namespace) return;
    const node = this.#nodes.get(p.metadata.labels?.[GATE_NODE_LABEL] ?? '');
    if (node === undefined) return;
    const pods = this.#holding.get(node) ?? new Set<string>();
    this.#holding.set(node, pods);
    const before = pods.size > 0;
    if (holds(type, p)) pods.add(p.metadata.name ?? '');
    else pods.delete(p.metadata.name ?? '');
    const after = pods.size > 0;
    if (before === after) return;
    const spans = this.#spans.get(node) ?? [];
    this.#spans.set(node, spans);
    const open = spans.at(-1);
    if (after) spans.push({ from: this.#now() });
    else if (open) open.until = this.#now();
  }

  /** The first moment at or after `at` the node's gate held (undefined: not since). */
  heldFrom(node: string, at: number): number | undefined {
    for (const s of this.#spans.get(node) ?? []) {
      if (s.until !== undefined && s.until < at) continue;
      return Math.max(s.from, at);
    }
    return undefined;
  }

  close(): void {
    this.#off();
  }
}
