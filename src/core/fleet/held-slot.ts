// A Lease held by this agent (a fleet slot, or the node's agent Lease): renewed while held, lost when
// another holder shows up or renewing fails for a whole lease duration, given back on release.
import type { Logger } from '../../observability/logger.ts';
import { isConflictError } from '../../errors.ts';
import type { FleetApi, LeaseView, Slot } from './types.ts';
import { monotonicMs } from './observed.ts';

/** MicroTime as the API server writes it (RFC 3339, microseconds). */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** What a held Lease needs: its two calls, its duration and a logger. */
export interface HeldLeaseOptions {
  /** Seconds a holder may go without renewing before its Lease may be taken. */
  readonly leaseDuration: number;
  readonly log: Logger;
  readonly api: Pick<FleetApi, 'getLease' | 'replaceLease'>;
  /** Renewed every this fraction of the duration (default a third). */
  readonly renewEvery?: number;
}

/**
 * A held Lease (a fleet slot, or the node's agent Lease): renewed every duration × renewEvery; `lost`
 * when someone else holds it or renewing failed too long.
 */
export class HeldSlot implements Slot {
  readonly name: string;
  readonly #lost = new AbortController();
  readonly #timer: NodeJS.Timeout;
  /** A try again soon after a failed renewal, so one failure does not wait a whole renewal period. */
  #retry: NodeJS.Timeout | undefined;
  #lease: LeaseView;
  #renewed: number;
  #chain: Promise<void> = Promise.resolve();
  #done = false;

  readonly node: string;
  readonly o: HeldLeaseOptions;
  readonly #what: string;

  /** `node` is the holder identity written in the Lease; `what` names the Lease in log lines. */
  constructor(lease: LeaseView, node: string, o: HeldLeaseOptions, what = 'fleet evacuation slot') {
    this.node = node;
    this.o = o;
    this.#what = what;
    this.name = lease.name;
    this.#lease = lease;
    this.#renewed = monotonicMs();
    this.#timer = setInterval(
      () => {
        this.#chain = this.#chain.then(() => this.#renew());
      },
      o.leaseDuration * 1000 * (o.renewEvery ?? 1 / 3),
    );
  }

  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  async #renew(): Promise<void> {
    if (this.#done || this.#lost.signal.aborted) return;
    try {
      this.#lease = await this.o.api.replaceLease({ ...this.#lease, renewTime: microTime(new Date()) });
      this.#renewed = monotonicMs();
      return;
    } catch (err) {
      if (isConflictError(err)) {
        const current = await this.o.api.getLease(this.name).catch(() => undefined);
        if (current?.holder === this.node) {
          this.#lease = current;
          return; // renewed next tick with the fresh resourceVersion
        }
        return this.#lose(`slot ${this.name} now held by ${current?.holder ?? 'nobody'}`);
      }
      this.o.log.warn({ err, slot: this.name }, `could not renew the ${this.#what}`);
    }
    if (monotonicMs() - this.#renewed > this.o.leaseDuration * 1000)
      return this.#lose('not renewed within the lease duration');
    // an API server away for a moment: try again within a tenth of the duration, not a renewal period
    this.#retry ??= setTimeout(
      () => {
        this.#retry = undefined;
        this.#chain = this.#chain.then(() => this.#renew());
      },
      Math.min(this.o.leaseDuration * 100, 30_000),
    );
  }

  #lose(why: string): void {
    clearInterval(this.#timer);
    clearTimeout(this.#retry);
    this.o.log.warn({ slot: this.name, why }, `lost the ${this.#what}`);
    this.#lost.abort(new Error(`lost ${this.#what} ${this.name}: ${why}`));
  }

  abandon(): void {
    this.#done = true;
    clearInterval(this.#timer);
    clearTimeout(this.#retry);
  }

  async release(): Promise<void> {
    this.abandon();
    await this.#chain;
    if (this.#lost.signal.aborted) return;
    const { holder: _h, ...rest } = this.#lease;
    try {
      await this.o.api.replaceLease({ ...rest, renewTime: microTime(new Date()) });
    } catch (err) {
      this.o.log.warn(
        { err, slot: this.name },
        `could not release the ${this.#what}; it expires after the lease duration`,
      );
    }
  }
}
