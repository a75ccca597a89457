// The shutdown watch: holds logind's delay lock while the node hosts VMs, and on PrepareForShutdown(true)
// hands the agent a deadline (logind's InhibitDelayMaxUSec from the signal, minus a margin) by which the lock
// must be given back. logind waits for delay locks only up to that cap, then shuts down anyway.
import type { Bus } from './bus.ts';
import type { DelayLock, TakeDelayLock } from './inhibitor.ts';
import type { DbusVariant } from './wire.ts';

const LOGIN1 = { destination: 'org.freedesktop.login1', path: '/org/freedesktop/login1' } as const;
const MANAGER = 'org.freedesktop.login1.Manager';

/** logind's cap on a delay lock, in ms (its InhibitDelayMaxUSec property; default 5 s, kubelet raises it). */
export async function inhibitDelayMaxMs(bus: Bus): Promise<number> {
  const [v] = await bus.call({
    ...LOGIN1,
    interface: 'org.freedesktop.DBus.Properties',
    member: 'Get',
    signature: 'ss',
    body: [MANAGER, 'InhibitDelayMaxUSec'],
  });
  return Number((v as DbusVariant).value) / 1000;
}

export interface ShutdownStart {
  /** When PrepareForShutdown(true) arrived (ms since the epoch). */
  readonly at: number;
  /** logind's cap, in ms. */
  readonly delayMaxMs: number;
  /** When drainer gives the lock back at the latest: at + delayMax - margin. */
  readonly releaseBy: number;
  /** logind's own deadline: at + delayMax. */
  readonly deadline: number;
}

export interface ShutdownWatchOptions {
  bus: Bus;
  takeLock: TakeDelayLock;
  /** How long before logind's deadline the lock is given back (capped at half the cap). */
  marginMs: number;
  /** PrepareForShutdown(true) while the lock is held: evacuate, then call release(). */
  onShutdown: (start: ShutdownStart) => void;
  now?: () => number;
}

export class ShutdownWatch {
  private lock: DelayLock | undefined;
  private wanted = false;
  private shuttingDown = false;
  private delayMax = 0;
  private change: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  private readonly o: ShutdownWatchOptions;

  private constructor(o: ShutdownWatchOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
  }

  /** Subscribes to PrepareForShutdown and reads the cap; a bus without logind throws (BusError ServiceUnknown). */
  static async start(o: ShutdownWatchOptions): Promise<ShutdownWatch> {
    const w = new ShutdownWatch(o);
    o.bus.onSignal((m) => {
      if (m.interface === MANAGER && m.member === 'PrepareForShutdown') w.signal(m.body?.[0] === true);
    });
    await o.bus.call({
      destination: 'org.freedesktop.DBus',
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      member: 'AddMatch',
      signature: 's',
      body: [
        `type='signal',sender='org.freedesktop.login1',interface='${MANAGER}',member='PrepareForShutdown'`,
      ],
    });
    w.delayMax = await inhibitDelayMaxMs(o.bus);
    return w;
  }

  get delayMaxMs(): number {
    return this.delayMax;
  }
  get held(): boolean {
    return this.lock !== undefined;
  }

  /** Holds the lock while the node hosts VMs, gives it back when it hosts none. Not re-taken during a shutdown. */
  want(hold: boolean): Promise<void> {
    this.wanted = hold;
    return this.settle();
  }

  /** Gives the lock back now (the evacuation ended, or cannot run); logind proceeds. */
  release(): Promise<void> {
    this.wanted = false;
    return this.settle();
  }

  private settle(): Promise<void> {
    this.change = this.change.then(async () => {
      // During a shutdown a lock is kept while wanted but never taken anew (logind would not wait for it).
      if (this.wanted && !this.shuttingDown && !this.lock) {
        const lock = await this.o.takeLock('live-migrating VMs off this node before it goes down');
        this.lock = lock;
        void lock.lost.then(() => {
          if (this.lock === lock) this.lock = undefined;
        });
      } else if (!this.wanted && this.lock) {
        const lock = this.lock;
        this.lock = undefined;
        await lock.release();
      }
    });
    return this.change;
  }

  private signal(active: boolean): void {
    if (!active) {
      // The shutdown was cancelled (or the host resumed): hold the lock again if still wanted.
      this.shuttingDown = false;
      void this.settle().catch(() => undefined);
      return;
    }
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    const at = this.now();
    // A lock still being taken counts: logind lists it from systemd-inhibit's own take, before its
    // holder says so, and waits for it all the same (a reboot right after the take waited logind's
    // whole cap for a lock the agent thought it did not hold).
    void this.change
      .catch(() => undefined)
      .then(() => {
        if (!this.lock) return; // nothing to protect: logind does not wait for us
        const margin = Math.min(this.o.marginMs, this.delayMax / 2);
        const deadline = at + this.delayMax;
        this.o.onShutdown({ at, delayMaxMs: this.delayMax, releaseBy: deadline - margin, deadline });
      });
  }
}
