// Per-key serial work queue: at most one run per key at a time; enqueues while a key runs
// coalesce into a single rerun; failures requeue with exponential backoff; a result may ask
// for a later run (periodic resync), or for a run once something it waits on comes about.
import type { Logger } from '../../observability/logger.ts';

export interface RunResult {
  /** Run this key again after so many ms (unless something enqueues it sooner). */
  readonly requeueAfterMs?: number;
  /**
   * Run this key again once this answers true: a wait the run hands over instead of polling for it
   * (each poll re-reads the world; at a thousand agents polls every few seconds are a storm). Its
   * signal aborts when the key runs again for any reason (that run says anew what it waits for).
   */
  readonly requeueWhen?: (signal: AbortSignal) => Promise<boolean>;
}

export type Handler = (key: string, signal: AbortSignal) => Promise<RunResult | void>;

export interface QueueOptions {
  readonly handler: Handler;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Backoff after failures: initial doubled per failure up to max (ms). */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Called when a key is enqueued while it runs (e.g. to cancel a stale evacuation). */
  readonly onBusy?: (key: string) => void;
}

interface KeyState {
  running: boolean;
  dirty: boolean;
  failures: number;
  timer?: NodeJS.Timeout;
  timerAt?: number;
  /** The wait a result handed over (aborted when the key runs again). */
  waiting?: AbortController;
}

export class KeyedQueue {
  readonly #opts: QueueOptions;
  readonly #keys = new Map<string, KeyState>();
  readonly #running = new Set<Promise<void>>();
  #idleWaiters: (() => void)[] = [];

  constructor(opts: QueueOptions) {
    this.#opts = opts;
    opts.signal.addEventListener('abort', () => this.#stopTimers(), { once: true });
  }

  /** Runs key now (or after delayMs); coalesces with a run already under way or pending. */
  enqueue(key: string, delayMs = 0): void {
    if (this.#opts.signal.aborted) return;
    const s = this.#state(key);
    if (delayMs > 0) {
      this.#schedule(key, s, delayMs);
      return;
    }
    if (s.running) {
      s.dirty = true;
      this.#opts.onBusy?.(key);
      return;
    }
    this.#clearTimer(s);
    this.#start(key, s);
  }

  isRunning(key: string): boolean {
    return this.#keys.get(key)?.running === true;
  }

  /** Resolves when no key runs or waits for an immediate rerun (delayed requeues do not count). */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Resolves once every running handler returned (call after aborting the signal). */
  async stopped(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  #state(key: string): KeyState {
    let s = this.#keys.get(key);
    if (!s) {
      s = { running: false, dirty: false, failures: 0 };
      this.#keys.set(key, s);
    }
    return s;
  }

  #schedule(key: string, s: KeyState, delayMs: number): void {
    const at = Date.now() + delayMs;
    if (s.timer && s.timerAt !== undefined && s.timerAt <= at) return; // an earlier run is already due
    this.#clearTimer(s);
    s.timerAt = at;
    s.timer = setTimeout(() => {
      s.timer = undefined;
      s.timerAt = undefined;
      this.enqueue(key);
    }, delayMs);
    s.timer.unref();
  }

  #clearTimer(s: KeyState): void {
    if (s.timer) clearTimeout(s.timer);
    s.timer = undefined;
    s.timerAt = undefined;
  }

  #start(key: string, s: KeyState): void {
    s.running = true;
    s.waiting?.abort();
    s.waiting = undefined;
    const run = this.#run(key, s).finally(() => {
      this.#running.delete(run);
      s.running = false;
      if (s.dirty && !this.#opts.signal.aborted) {
        s.dirty = false;
        this.#clearTimer(s);
        this.#start(key, s);
      } else {
        s.dirty = false;
        this.#notifyIdle();
      }
    });
    this.#running.add(run);
  }

  async #run(key: string, s: KeyState): Promise<void> {
    const { handler, signal, log } = this.#opts;
    try {
      const result = await handler(key, signal);
      s.failures = 0;
      if (result?.requeueAfterMs !== undefined && !signal.aborted)
        this.#schedule(key, s, result.requeueAfterMs);
      if (result?.requeueWhen && !signal.aborted) this.#wait(key, s, result.requeueWhen);
    } catch (err) {
      if (signal.aborted) return;
      s.failures += 1;
      const delay = this.#backoff(s.failures);
      log.warn({ err, key, retryInMs: delay, failures: s.failures }, 'reconcile failed; retrying');
      this.#schedule(key, s, delay);
    }
  }

  #wait(key: string, s: KeyState, when: NonNullable<RunResult['requeueWhen']>): void {
    const ctl = new AbortController();
    s.waiting = ctl;
    when(ctl.signal)
      .then((yes) => {
        if (yes && !ctl.signal.aborted) this.enqueue(key);
      })
      .catch((err: unknown) => this.#opts.log.debug({ err, key }, 'a wait for the next run failed'))
      .finally(() => {
        if (s.waiting === ctl) s.waiting = undefined;
      });
  }

  #backoff(failures: number): number {
    const { initialMs, maxMs } = this.#opts.backoff ?? { initialMs: 1000, maxMs: 60_000 };
    const exp = Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 30));
    return Math.round(exp * (0.8 + Math.random() * 0.4)); // jitter so agents do not retry in step
  }

  #isIdle(): boolean {
    for (const s of this.#keys.values()) if (s.running || s.dirty) return false;
    return true;
  }

  #notifyIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #stopTimers(): void {
    for (const s of this.#keys.values()) {
      this.#clearTimer(s);
      s.waiting?.abort();
    }
    this.#notifyIdle();
  }
}
