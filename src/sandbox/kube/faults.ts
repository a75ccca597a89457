// Injected faults: failing requests for a while, dropped watch streams, a compacted history.
import { failure, reasonFor } from './status.ts';
import type { Status } from './types.ts';

export interface KubeFaults {
  /** Answers matching requests (RegExp tested on "METHOD /path?query" and on "/path?query") with `status` for `forMs`. */
  failRequests(opts: { status: number; forMs: number; match?: RegExp }): void;
  /** Ends every open watch stream (clients must re-watch). */
  dropWatches(): void;
  /** Older resourceVersions now answer 410 Gone. */
  compactHistory(): void;
}

interface ActiveFault {
  status: number;
  until: number;
  match?: RegExp;
}

export class FaultInjector implements KubeFaults {
  readonly #active: ActiveFault[] = [];
  readonly #now: () => number;
  readonly #openWatches = new Set<() => void>();
  readonly #compact: () => void;

  constructor(now: () => number, compact: () => void) {
    this.#now = now;
    this.#compact = compact;
  }

  failRequests(opts: { status: number; forMs: number; match?: RegExp }): void {
    this.#active.push({ status: opts.status, until: this.#now() + opts.forMs, match: opts.match });
  }

  dropWatches(): void {
    for (const close of [...this.#openWatches]) close();
  }

  compactHistory(): void {
    this.#compact();
  }

  /** Registers an open watch; returns the deregistration. */
  trackWatch(close: () => void): () => void {
    this.#openWatches.add(close);
    return () => this.#openWatches.delete(close);
  }

  /** The Status to answer instead of serving the request, if a fault applies. */
  check(method: string, url: string): Status | undefined {
    const now = this.#now();
    for (let i = this.#active.length - 1; i >= 0; i--) {
      if ((this.#active[i] as ActiveFault).until <= now) this.#active.splice(i, 1);
    }
    const hit = this.#active.find((f) => !f.match || f.match.test(`${method} ${url}`) || f.match.test(url));
    if (!hit) return undefined;
    return failure(hit.status, reasonFor(hit.status), `injected fault: ${hit.status}`, { details: {} });
  }
}
