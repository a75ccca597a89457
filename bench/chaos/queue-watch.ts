// The fleet queue as the API server saw it, on its clock: when each node got drainer.dev/queued (a
// label put back with the same value continues the first span: a resumed node keeps its place), and
// who held each slot Lease when (a holder's writes are its renewals). The FIFO invariant judges it.
import { QUEUED_LABEL } from '../../src/names.ts';
import type { ObservedQueue, ObservedSpan } from '../../src/invariants/world.ts';

interface ObjectLike {
  metadata: { name?: string; labels?: Record<string, string> };
  spec?: unknown;
}

/** What the watcher needs of the sandbox: its store's changes and its clock. */
export interface QueueSource {
  subscribe(res: string, cb: (type: string, obj: ObjectLike) => void): () => void;
  now(): number;
}

type Span = { -readonly [K in keyof ObservedSpan]: ObservedSpan[K] } & { since?: number };
type SlotSpan = Span & { slot: string; renewedAt?: number };

const SLOT = /^drainer-evacuation-\d+$/;

export class QueueWatch {
  readonly #now: () => number;
  readonly #staleMs: number;
  readonly #resolutionMs: number | undefined;
  readonly #queued: Span[] = [];
  readonly #slots: SlotSpan[] = [];
  /** Per node: its open span and the label value it began with. */
  readonly #open = new Map<string, { span: Span; value: string }>();
  /** Per node: the value and start of its last span (a label put back with it resumes that place). */
  readonly #last = new Map<string, { value: string; from: number }>();
  readonly #offs: (() => void)[];

  /** resolutionMs: a second of the API server's Date header on the source's clock (ObservedQueue). */
  constructor(source: QueueSource, o: { staleMs: number; resolutionMs?: number }) {
    this.#now = () => source.now();
    this.#staleMs = o.staleMs;
    this.#resolutionMs = o.resolutionMs;
    this.#offs = [
      source.subscribe('nodes', (type, n) => this.#node(type, n)),
      source.subscribe('leases.coordination.k8s.io', (type, l) => this.#lease(type, l)),
    ];
  }

  #node(type: string, n: ObjectLike): void {
    const name = n.metadata.name ?? '';
    const value = type === 'DELETED' ? undefined : n.metadata.labels?.[QUEUED_LABEL];
    const open = this.#open.get(name);
    if (open && open.value === value) return;
    const now = this.#now();
    if (open) {
      open.span.until = now;
      this.#open.delete(name);
    }
    if (value === undefined) return;
    const last = this.#last.get(name);
    const kept = last?.value === value;
    const span: Span = { node: name, from: kept ? last.from : now, ...(kept ? { since: now } : {}) };
    this.#queued.push(span);
    this.#open.set(name, { span, value });
    this.#last.set(name, { value, from: span.from });
  }

  #lease(type: string, l: ObjectLike): void {
    const slot = l.metadata.name ?? '';
    if (!SLOT.test(slot)) return;
    const holder =
      type === 'DELETED' ? undefined : (l.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    const node = holder ? (holder.split('/')[0] ?? holder) : undefined;
    const now = this.#now();
    const open = this.#slots.find((s) => s.slot === slot && s.until === undefined);
    if (open && open.node === node) {
      open.renewedAt = now;
      return;
    }
    if (open) open.until = now;
    if (node) this.#slots.push({ node, slot, from: now });
  }

  get queue(): ObservedQueue {
    return {
      queued: this.#queued.map((s) => ({ ...s })),
      slots: this.#slots.map((s) => ({ ...s })),
      staleMs: this.#staleMs,
      ...(this.#resolutionMs !== undefined ? { resolutionMs: this.#resolutionMs } : {}),
    };
  }

  close(): void {
    for (const off of this.#offs) off();
  }
}
