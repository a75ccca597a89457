// Each node's maintenances as the API server saw them: one lasts from the moment its record
// (drainer.dev/state) appears until it is gone or the Node is registered again. An operator's
// `drainer release` belongs to the maintenance it was given in: it excuses gate removals and drain
// returns from its moment until that maintenance ends, and nothing of a later one (the soak must
// still see a leftover release that opens the next maintenance's gate).
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import type { ObservedRelease } from '../../src/invariants/world.ts';

interface NodeLike {
  metadata: { name?: string; uid?: string; annotations?: Record<string, string> };
}

/** What the tracker needs of the sandbox: its store's Node changes and its clock. */
export interface MaintenanceSource {
  subscribe(res: string, cb: (type: string, obj: NodeLike) => void): () => void;
  now(): number;
}

export class Maintenances {
  readonly #now: () => number;
  /** Per node, the number of its current maintenance (undefined: in service). */
  readonly #current = new Map<string, number>();
  readonly #uids = new Map<string, string>();
  #count = 0;
  readonly #releases: (ObservedRelease & { maintenance: number })[] = [];
  /** When each ended maintenance ended. */
  readonly #ended = new Map<number, number>();
  /** Per node, how many of its maintenances ended. */
  readonly #ends = new Map<string, number>();
  /** Per node, how often a restore began (its record went to Restoring), and its record's phase last seen. */
  readonly #restores = new Map<string, number>();
  readonly #phase = new Map<string, string | undefined>();
  readonly #off: () => void;

  constructor(source: MaintenanceSource) {
    this.#now = () => source.now();
    this.#off = source.subscribe('nodes', (type, obj) => this.#seen(type, obj));
  }

  #seen(type: string, n: NodeLike): void {
    const name = n.metadata.name ?? '';
    const uid = n.metadata.uid ?? '';
    const gone = type === 'DELETED' || this.#uids.get(name) !== uid;
    this.#uids.set(name, uid);
    const text = type === 'DELETED' ? undefined : n.metadata.annotations?.[STATE_ANNOTATION];
    const has = text !== undefined;
    if (gone || !has) this.#end(name);
    if (has && this.#current.get(name) === undefined) this.#current.set(name, ++this.#count);
    const phase = has ? phaseOf(text) : undefined;
    if (phase === 'Restoring' && this.#phase.get(name) !== 'Restoring')
      this.#restores.set(name, (this.#restores.get(name) ?? 0) + 1);
    this.#phase.set(name, phase);
  }

  #end(node: string): void {
    const m = this.#current.get(node);
    if (m === undefined) return;
    this.#current.delete(node);
    const at = this.#now();
    this.#ended.set(m, at);
    this.#ends.set(node, (this.#ends.get(node) ?? 0) + 1);
    for (const r of this.#releases)
      if (r.maintenance === m && r.until === undefined) Object.assign(r, { until: at });
  }

  /** The phase of the node's record as last seen (undefined: in service, or not a record this reads). */
  phase(node: string): string | undefined {
    return this.#phase.get(node);
  }

  /** The node's current maintenance (a number unique in the soak), if it has a record. */
  current(node: string): number | undefined {
    return this.#current.get(node);
  }

  /** How many maintenances of the node ended so far (it was back in service, or registered again, that often). */
  ends(node: string): number {
    return this.#ends.get(node) ?? 0;
  }

  /**
   * How often the node was being given back so far: a restore began (an uncordon, a deleted
   * NodeMaintenance: drainer starts what it stopped and moves nothing off any more) or a maintenance
   * ended. A drain that returns after one of them, while it ran, promises nothing.
   */
  givenBack(node: string): number {
    return this.ends(node) + (this.#restores.get(node) ?? 0);
  }

  /** When the maintenance ended (undefined: it lasts). */
  endOf(maintenance: number): number | undefined {
    return this.#ended.get(maintenance);
  }

  /** How many maintenances began in the soak. */
  get count(): number {
    return this.#count;
  }

  /** Now, on the clock of the API server's request log (a release's span starts before its command). */
  now(): number {
    return this.#now();
  }

  /**
   * An operator's release of the node's gate succeeded; it was issued at `from` (its first request
   * came after). It counts for the maintenance the node was in then, if that one still lasts.
   */
  released(node: string, from: number, maintenance: number | undefined): void {
    if (maintenance === undefined || this.#current.get(node) !== maintenance) return;
    this.#releases.push({ node, from, maintenance });
  }

  /** Was the node's gate released by an operator in its current maintenance? */
  releasedNow(node: string): boolean {
    const m = this.#current.get(node);
    return m !== undefined && this.#releases.some((r) => r.maintenance === m);
  }

  /** The releases with their spans, for the invariants. */
  get releases(): ObservedRelease[] {
    return this.#releases.map(({ node, from, until }) => ({
      node,
      from,
      ...(until !== undefined ? { until } : {}),
    }));
  }

  close(): void {
    this.#off();
  }
}

/** The record's phase, from the annotation's text (undefined: not a record this reads). */
function phaseOf(text: string): string | undefined {
  try {
    const v = JSON.parse(text) as { phase?: unknown };
    return typeof v.phase === 'string' ? v.phase : undefined;
  } catch {
    return undefined;
  }
}
