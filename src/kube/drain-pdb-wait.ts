// Wakes PDB-blocked evictions as soon as a matching PodDisruptionBudget allows a disruption again,
// instead of sleeping the whole retry interval as kubectl does. One list+watch of
// poddisruptionbudgets per namespace that saw a 429, started lazily and ended with the drain.
import type { Logger } from '../observability/logger.ts';
import type { KubeClients } from './client.ts';
import { selectorMatches, type Pdb } from './drain-pdb.ts';
import type { KubePod } from './types.ts';
import { runWatch } from './watch.ts';

interface Seen {
  readonly pdb: Pdb;
  /** Order of arrival: a state newer than a waiter's mark can wake it. */
  readonly seq: number;
}

interface Waiter {
  readonly pod: KubePod;
  readonly since: number;
  readonly wake: () => void;
}

/** The budget lets one more pod go (and its status is current for its spec). */
const allows = (p: Pdb): boolean =>
  (p.status?.disruptionsAllowed ?? 0) > 0 &&
  (p.status?.observedGeneration ?? 0) >= (p.metadata.generation ?? 0);

export class PdbWaiter {
  readonly #k: KubeClients;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;
  readonly #watches: Promise<void>[] = [];
  readonly #namespaces = new Set<string>();
  /** namespace/name → latest state seen. */
  readonly #pdbs = new Map<string, Seen>();
  readonly #waiters = new Set<Waiter>();
  #seq = 0;

  constructor(o: { k: KubeClients; log: Logger; signal: AbortSignal }) {
    this.#k = o.k;
    this.#log = o.log;
    this.#signal = AbortSignal.any([o.signal, this.#stop.signal]);
  }

  /** Take before sending an eviction: only budget changes after it may wake that pod. */
  mark(): number {
    return this.#seq;
  }

  /**
   * Resolves when a budget selecting `pod` has changed since `since` and allows a disruption, or
   * after `maxMs`, whichever is first. Rejects only when `signal` aborts.
   */
  wait(pod: KubePod, since: number, maxMs: number, signal: AbortSignal): Promise<void> {
    this.#ensureWatch(pod.metadata.namespace ?? '');
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        this.#waiters.delete(w);
        resolve();
      };
      const aborted = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(w);
        reject(signal.reason as Error);
      };
      const w: Waiter = { pod, since, wake: done };
      const timer = setTimeout(done, maxMs);
      if (signal.aborted) return aborted();
      signal.addEventListener('abort', aborted, { once: true });
      this.#waiters.add(w);
      if (this.#ready(w)) done();
    });
  }

  /** Ends the watches (the drain is over). */
  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#watches);
  }

  #ready(w: Waiter): boolean {
    const ns = w.pod.metadata.namespace ?? '';
    const labels = w.pod.metadata.labels ?? {};
    for (const s of this.#pdbs.values()) {
      if (s.seq <= w.since || s.pdb.metadata.namespace !== ns) continue;
      if (allows(s.pdb) && selectorMatches(s.pdb.spec?.selector, labels)) return true;
    }
    return false;
  }

  #ensureWatch(ns: string): void {
    if (this.#namespaces.has(ns) || this.#signal.aborted) return;
    this.#namespaces.add(ns);
    this.#watches.push(
      runWatch<Pdb>({
        k: this.#k,
        path: `/apis/policy/v1/namespaces/${encodeURIComponent(ns)}/poddisruptionbudgets`,
        onEvent: (type, pdb) => this.#observe(type, pdb),
        signal: this.#signal,
        log: this.#log,
        backoff: { initialMs: 200, maxMs: 5000 },
      }),
    );
  }

  #observe(type: string, pdb: Pdb): void {
    const key = `${pdb.metadata.namespace ?? ''}/${pdb.metadata.name ?? ''}`;
    if (type === 'DELETED') {
      // a budget gone no longer blocks the pods it selected
      this.#pdbs.delete(key);
      for (const w of [...this.#waiters]) {
        const sameNs = w.pod.metadata.namespace === pdb.metadata.namespace;
        if (sameNs && selectorMatches(pdb.spec?.selector, w.pod.metadata.labels ?? {})) w.wake();
      }
      return;
    }
    this.#pdbs.set(key, { pdb, seq: ++this.#seq });
    if (!allows(pdb)) return;
    for (const w of [...this.#waiters]) if (this.#ready(w)) w.wake();
  }
}
