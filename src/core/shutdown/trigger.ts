// The agent's side of a host shutdown (issue 49): keeps logind's delay lock while the node hosts VMs; on
// PrepareForShutdown(true) marks the Node (mark.ts: the reconciler then cordons and evacuates at once)
// and gives the lock back when the host is empty or at the latest by releaseBy, whichever comes first.
// It never holds a shutdown up for nothing: without the API server or the cloud it gives the lock back at
// once and says why. After boot it takes the mark off once the node and its compute service are ready.
import type { Logger } from '../../observability/logger.ts';

/** What the trigger needs of the lock (src/logind/watch.ts's ShutdownWatch). */
export interface LockPort {
  want(hold: boolean): Promise<void>;
  release(): Promise<void>;
}

export interface ShutdownPorts {
  readonly lock: LockPort;
  /** VMs on the host now (every plugin's, stopped ones included). */
  hosting(signal: AbortSignal): Promise<number>;
  /** Why an evacuation cannot run now (the API server or a cloud unreachable), or undefined. */
  unreachable(signal: AbortSignal): Promise<string | undefined>;
  /** Sets (null: removes) the Node's shutdown mark. */
  mark(value: string | null): Promise<void>;
  /** The Node carries the mark. */
  marked(): Promise<boolean>;
  /**
   * logind's time is up with VMs still on the host: each plugin's fallback (fallback.ts); answers
   * the line that says what it did. Ends by the signal, `marginMs` from the call: the lock goes back
   * then, done or not.
   */
  fallback?(signal: AbortSignal, marginMs: number): Promise<string>;
  /** The node is Ready and its compute services are up (after boot). */
  ready(signal: AbortSignal): Promise<boolean>;
  readonly log: Logger;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Between two looks at the host while it empties (default 1 s). */
  readonly pollMs?: number;
}

export interface ShutdownTiming {
  readonly at: number;
  readonly releaseBy: number;
  /** logind's own deadline (at + InhibitDelayMaxUSec): the fallback may take half of what is left. */
  readonly deadline?: number;
}

/**
 * How long the reachability check may take: the issue's "released within 2 s" when nothing answers, with
 * room for the release itself (its holder's exit took up to 0.4 s on a loaded machine: 1.5 s gave 1.9 s).
 */
const REACH_MS = 1200;

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

export class ShutdownTrigger {
  readonly #p: ShutdownPorts;
  constructor(p: ShutdownPorts) {
    this.#p = p;
  }

  /** Holds the lock only while the node hosts VMs (called at start and at every resync). */
  async refresh(signal: AbortSignal): Promise<void> {
    await this.#p.lock.want((await this.#p.hosting(signal)) > 0);
  }

  /** PrepareForShutdown(true) with the lock held. Resolves once the lock is given back. */
  async onShutdown(
    t: ShutdownTiming,
  ): Promise<{ released: 'empty' | 'deadline' | 'unreachable'; left: number }> {
    const { log, lock } = this.#p;
    const now = this.#p.now ?? Date.now;
    const sleep = this.#p.sleep ?? pause;
    const why = await this.#unreachable();
    if (why) {
      await lock.release();
      log.warn(
        { why, afterMs: now() - t.at },
        `host shutting down: delay lock released at once, nothing evacuated: ${why}`,
      );
      return { released: 'unreachable', left: -1 };
    }
    try {
      await this.#p.mark(new Date(t.at).toISOString());
    } catch (err) {
      await lock.release();
      log.warn({ err }, 'host shutting down: delay lock released at once: the Node could not be marked');
      return { released: 'unreachable', left: -1 };
    }
    log.info(
      { releaseBy: new Date(t.releaseBy).toISOString() },
      "host shutting down: evacuating before logind's deadline",
    );
    // the clock, not a timer, ends the wait: a test drives it, and a slow answer counts against it
    const remaining = () => Math.max(0, Math.floor(t.releaseBy - now()));
    const look = () => this.#p.hosting(AbortSignal.timeout(remaining())).catch(() => -1);
    let left: number;
    let did: string | undefined;
    try {
      left = await look();
      while (left !== 0 && remaining() > 0) {
        await sleep(Math.min(this.#p.pollMs ?? 1000, remaining()), AbortSignal.timeout(remaining()));
        if (remaining() > 0) left = await look();
      }
      if (left !== 0) did = await this.#fallback(t, now);
    } finally {
      // whatever failed on the way: logind must not wait for nothing
      await lock.release();
    }
    if (left === 0) {
      log.info('host shutting down: the host is empty, delay lock released');
      return { released: 'empty', left };
    }
    log.warn(
      { left },
      `host shutting down: logind's deadline is near, delay lock released with VMs still on the host${did ? `: ${did}` : ''}`,
    );
    return { released: 'deadline', left };
  }

  /** After boot: the mark comes off once the node and its compute services are ready (the restore follows). */
  async afterBoot(signal: AbortSignal): Promise<void> {
    if (!(await this.#p.marked())) return;
    const sleep = this.#p.sleep ?? pause;
    while (!signal.aborted && !(await this.#p.ready(signal).catch(() => false)))
      await sleep(this.#p.pollMs ?? 1000, signal);
    if (signal.aborted) return;
    await this.#p.mark(null);
    this.#p.log.info('host back from a shutdown: node and compute services ready, giving the node back');
  }

  /** Half of what is left before logind's deadline (the margin), and at least half a second. */
  async #fallback(t: ShutdownTiming, now: () => number): Promise<string | undefined> {
    if (!this.#p.fallback) return undefined;
    const p = this.#p;
    // whole milliseconds: AbortSignal.timeout throws on a fraction
    const ms = Math.max(500, Math.floor(((t.deadline ?? t.releaseBy) - now()) / 2));
    return Promise.resolve()
      .then(() => p.fallback?.(AbortSignal.timeout(ms), ms))
      .catch((e: unknown) => `fallback failed: ${e instanceof Error ? e.message : String(e)}`);
  }

  async #unreachable(): Promise<string | undefined> {
    const signal = AbortSignal.timeout(REACH_MS);
    const timedOut = new Promise<string>((resolve) =>
      signal.addEventListener('abort', () => resolve(`no answer in ${REACH_MS / 1000} s`), { once: true }),
    );
    return Promise.race([
      this.#p.unreachable(signal).catch((e: unknown) => (e instanceof Error ? e.message : 'no answer')),
      timedOut,
    ]);
  }
}
