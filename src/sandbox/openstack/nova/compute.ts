// Simulated conductor + scheduler + nova-compute. Live migrations: accepted → (scheduler)
// → queued on the source host → preparing → running → completed, at most
// max_concurrent_live_migrations running per source host. The memory copy follows the pre-copy
// model (convergence.ts): a busy guest never converges, and the host's completion timeout (0:
// none) aborts or force-completes it as Nova's live_migration_timeout_action does. Cold
// migrations: RESIZE → VERIFY_RESIZE on the destination, then confirm/revert. All timing on the
// injected clock.
import type { Clock } from '../../clock.ts';
import type { ComputeTimings, NovaFaults } from '../types.ts';
import { preCopy, type PreCopy } from './convergence.ts';
import { Lifecycle } from './lifecycle.ts';
import type { ComputeNode, Flavor, Migration, NovaModel, Server } from './model.ts';

export class NoValidHost extends Error {}

const ACTIVE_STATUSES = new Set(['accepted', 'queued', 'preparing', 'running', 'post-migrating']);
/** A migration, live or cold, not yet at an end. */
const UNFINISHED = new Set([...ACTIVE_STATUSES, 'pre-migrating', 'migrating']);
const MB = 1024 * 1024;

/** A running live migration's copy: when it started and how it goes. */
interface Copy {
  since: number;
  model: PreCopy;
  totalBytes: number;
  /** Set when it ended (switched over or stopped): the counters stay as they were then. */
  endedAt?: number;
}

/** The counters of GET /servers/{id}/migrations/{mid} (2.23+). */
export interface CopyCounters {
  memoryTotal: number;
  memoryProcessed: number;
  memoryRemaining: number;
}

export class ComputeSim {
  readonly #model: NovaModel;
  readonly #clock: Clock;
  readonly #faults: NovaFaults;
  readonly #t: ComputeTimings;
  /** Per source host: migrations holding a slot, and those waiting for one (FIFO). */
  readonly #running = new Map<string, Set<number>>();
  readonly #queued = new Map<string, Migration[]>();
  /** The pending step of each migration, so abort/force-complete can replace it. */
  readonly #step = new Map<number, () => void>();
  readonly #timers = new Set<() => void>();
  readonly #copies = new Map<number, Copy>();
  /** What owners do to their servers: stop, start, shelve, unshelve, delete. */
  readonly lifecycle: Lifecycle;

  constructor(model: NovaModel, clock: Clock, faults: NovaFaults, timings: ComputeTimings) {
    this.#model = model;
    this.#clock = clock;
    this.#faults = faults;
    this.#t = timings;
    this.lifecycle = new Lifecycle(model, clock, timings, this);
  }

  close(): void {
    this.lifecycle.close();
    for (const cancel of this.#timers) cancel();
    this.#timers.clear();
    this.#step.clear();
  }

  #after(ms: number, fn: () => void): () => void {
    const cancel = this.#clock.after(ms, () => {
      this.#timers.delete(cancel);
      fn();
    });
    this.#timers.add(cancel);
    return () => {
      this.#timers.delete(cancel);
      cancel();
    };
  }

  /** Schedules the next step of a migration, replacing any pending one. */
  #stepAfter(m: Migration, ms: number, fn: () => void): void {
    this.#step.get(m.id)?.();
    const cancel = this.#after(ms, () => {
      this.#step.delete(m.id);
      fn();
    });
    this.#step.set(m.id, cancel);
  }

  #cancelStep(m: Migration): void {
    this.#step.get(m.id)?.();
    this.#step.delete(m.id);
  }

  /** The scheduler: an enabled, up compute host other than the source, with room for the server. */
  pickDestination(server: Server, requested: string | null): ComputeNode | undefined {
    const candidates = this.#model.services.filter(
      (s) =>
        s.binary === 'nova-compute' &&
        s.status === 'enabled' &&
        !s.forcedDown &&
        s.host !== server.host &&
        (requested === null || s.host === requested) &&
        this.#model.freeRamMb(s.host) >= server.ramMb,
    );
    // Nova's RAM weigher spreads: the most free RAM wins.
    candidates.sort(
      (a, b) => this.#model.freeRamMb(b.host) - this.#model.freeRamMb(a.host) || a.host.localeCompare(b.host),
    );
    const best = candidates[0];
    return best ? this.#model.nodeOfHost(best.host) : undefined;
  }

  /**
   * Starts a live migration (the API has checked states). With `async` false (before 2.34)
   * the scheduler runs inside the request and NoValidHost is thrown to become a 400.
   */
  liveMigrate(server: Server, requested: string | null, async: boolean): Migration {
    const m = this.#model.newMigration(server, 'live-migration', 'accepted');
    if (requested !== null) this.#model.setMigration(m, { destCompute: requested });
    this.#model.setServer(server, { taskState: 'migrating' });
    if (!async) {
      const dest = this.pickDestination(server, requested);
      if (!dest) {
        this.#noValidHost(m, server);
        throw new NoValidHost();
      }
      this.#stepAfter(m, this.#t.scheduleMs, () => this.#enqueue(m, server, dest));
      return m;
    }
    this.#stepAfter(m, this.#t.scheduleMs, () => {
      const dest = this.pickDestination(server, requested);
      if (dest) this.#enqueue(m, server, dest);
      else this.#noValidHost(m, server);
    });
    return m;
  }

  #noValidHost(m: Migration, server: Server): void {
    this.#model.setMigration(m, { status: 'error', destCompute: null });
    this.#model.setServer(server, { taskState: null });
  }

  #enqueue(m: Migration, server: Server, dest: ComputeNode): void {
    this.#model.setMigration(m, {
      status: 'queued',
      destCompute: dest.serviceHost,
      destNode: dest.hostname,
      sourceNode: server.node,
    });
    const q = this.#queued.get(m.sourceCompute) ?? [];
    q.push(m);
    this.#queued.set(m.sourceCompute, q);
    this.#startNext(m.sourceCompute);
  }

  #startNext(host: string): void {
    const running = this.#running.get(host) ?? new Set<number>();
    this.#running.set(host, running);
    const limit = this.#model.nodeOfHost(host)?.maxConcurrentLiveMigrations ?? 1;
    const q = this.#queued.get(host) ?? [];
    while (running.size < limit && q.length > 0) {
      const m = q.shift();
      if (!m) break;
      running.add(m.id);
      this.#model.setMigration(m, { status: 'preparing' });
      this.#stepAfter(m, this.#t.prepareMs, () => this.#run(m));
    }
  }

  #release(m: Migration): void {
    this.#running.get(m.sourceCompute)?.delete(m.id);
    this.#startNext(m.sourceCompute);
  }

  #run(m: Migration): void {
    const server = this.#model.servers.get(m.instanceUuid);
    if (!server) return;
    this.#model.setMigration(m, { status: 'running' });
    const copy = this.#copyOf(server);
    this.#copies.set(m.id, { since: this.#clock.now(), model: copy, totalBytes: server.ramMb * MB });
    if (this.#faults.hangMigrations(server.id)) return;
    if (this.#faults.failMigrations(server.id)) {
      this.#stepAfter(m, server.migrationMs / 2, () => this.#fail(m, server));
      return;
    }
    const fault = this.#faults.errorMigrations(server.id);
    if (fault !== undefined) {
      this.#stepAfter(m, server.migrationMs / 2, () => this.#errorOut(m, server, fault));
      return;
    }
    const node = this.#model.nodeOfHost(m.sourceCompute);
    const timeoutMs = (node?.completionTimeoutSecondsPerGiB ?? 0) * 1000 * (server.ramMb / 1024);
    const converge = copy.convergeMs;
    if (timeoutMs > 0 && (converge === undefined || converge > timeoutMs)) {
      // Nova's live_migration_completion_timeout, then its live_migration_timeout_action
      const action = node?.timeoutAction ?? 'abort';
      this.#stepAfter(m, timeoutMs, () => (action === 'abort' ? this.abort(m) : this.forceComplete(m)));
      return;
    }
    if (converge === undefined) return; // copies on until someone ends it
    const done = this.#faults.completeWithoutMove(server.id)
      ? () => this.#completeWithoutMove(m)
      : () => this.#switchHost(m, server);
    this.#stepAfter(m, converge, done);
  }

  /** The copy of this server: the source host's link, or one that moves it in migrationMs. */
  #copyOf(server: Server): PreCopy {
    const totalBytes = server.ramMb * MB;
    const link = this.#model.nodeOfHost(server.host ?? '')?.migrationMbPerSecond;
    const bandwidth = link !== undefined ? (link * MB) / 1000 : totalBytes / Math.max(1, server.migrationMs);
    return preCopy({ totalBytes, bandwidth, dirtyRate: (server.dirtyMbPerSecond * MB) / 1000 });
  }

  /** The field's failure: the record says completed, the server stays MIGRATING on its source. */
  #completeWithoutMove(m: Migration): void {
    this.#endCopy(m);
    this.#model.setMigration(m, { status: 'completed' });
    this.#release(m);
  }

  #endCopy(m: Migration): void {
    const c = this.#copies.get(m.id);
    if (c && c.endedAt === undefined) c.endedAt = this.#clock.now();
  }

  /** The migration's memory counters, or undefined before it runs (Nova shows null then). */
  counters(m: Migration): CopyCounters | undefined {
    const c = this.#copies.get(m.id);
    if (!c) return undefined;
    const { processed, remaining } = c.model.at((c.endedAt ?? this.#clock.now()) - c.since);
    return { memoryTotal: c.totalBytes, memoryProcessed: processed, memoryRemaining: remaining };
  }

  /** The migration fails and leaves the server in ERROR on its source, with a fault to show. */
  #errorOut(m: Migration, server: Server, fault: string): void {
    this.#model.setMigration(m, { status: 'error' });
    this.#model.setServer(server, { taskState: null, vmState: 'error', fault });
    this.#release(m);
  }

  #fail(m: Migration, server: Server): void {
    this.#endCopy(m);
    this.#model.setMigration(m, { status: 'error' });
    this.#model.setServer(server, { taskState: null });
    this.#release(m);
  }

  /**
   * The server shows the new host in one step; the record says `completed` postMigrationMs later and
   * holds the slot until then (Nova's _post_live_migration: the source's clean-up after the switch).
   */
  #switchHost(m: Migration, server: Server): void {
    this.#endCopy(m);
    this.#model.setMigration(m, { landedAt: this.#clock.now() });
    this.#model.setServer(server, { host: m.destCompute, node: m.destNode, taskState: null });
    this.#stepAfter(m, this.#t.postMigrationMs, () => {
      this.#model.setMigration(m, { status: 'completed' });
      this.#release(m);
    });
  }

  /** DELETE /servers/{id}/migrations/{mid}: the API has checked the status is abortable. */
  abort(m: Migration): void {
    const server = this.#model.servers.get(m.instanceUuid);
    // the guest already runs on the destination (the record says running until post-migration
    // ends): there is no job left to abort, and the migration completes as it would have
    if (server && m.destCompute && server.host === m.destCompute && server.taskState === null) return;
    if (m.status === 'queued') {
      const q = this.#queued.get(m.sourceCompute) ?? [];
      this.#queued.set(
        m.sourceCompute,
        q.filter((x) => x.id !== m.id),
      );
    }
    const wasRunning = this.#running.get(m.sourceCompute)?.has(m.id) ?? false;
    this.#cancelStep(m);
    this.#stepAfter(m, this.#t.abortMs, () => {
      this.#endCopy(m);
      this.#model.setMigration(m, { status: 'cancelled' });
      if (server) this.#model.setServer(server, { taskState: null });
      if (wasRunning) this.#release(m);
    });
  }

  /**
   * POST …/migrations/{mid}/action force_complete (or the timeout action force_complete): the
   * guest is paused while the rest is copied, then it runs on the destination.
   */
  forceComplete(m: Migration): void {
    const server = this.#model.servers.get(m.instanceUuid);
    if (!server) return;
    const left = this.counters(m)?.memoryRemaining ?? 0;
    const bandwidth = (server.ramMb * MB) / Math.max(1, server.migrationMs);
    const link = this.#model.nodeOfHost(m.sourceCompute)?.migrationMbPerSecond;
    const pauseMs = left / (link !== undefined ? (link * MB) / 1000 : bandwidth);
    this.#stepAfter(m, this.#t.abortMs + pauseMs, () => this.#switchHost(m, server));
  }

  /** A deleted server's migrations in flight end in error, and free their slot. */
  forget(server: Server): void {
    for (const m of this.#model.migrations) {
      if (m.instanceUuid !== server.id || !UNFINISHED.has(m.status)) continue;
      this.#cancelStep(m);
      const q = this.#queued.get(m.sourceCompute) ?? [];
      this.#queued.set(
        m.sourceCompute,
        q.filter((x) => x.id !== m.id),
      );
      this.#endCopy(m);
      this.#model.setMigration(m, { status: 'error' });
      if (this.#running.get(m.sourceCompute)?.has(m.id)) this.#release(m);
    }
  }

  isActive(m: Migration): boolean {
    return ACTIVE_STATUSES.has(m.status);
  }

  /**
   * Cold migration (resize to the same flavor), or an owner's resize to `flavor` (on another host:
   * Nova's allow_resize_to_same_host is false by default): RESIZE → VERIFY_RESIZE on the destination.
   */
  coldMigrate(server: Server, requested: string | null, flavor?: Flavor): Migration {
    const m = this.#model.newMigration(server, flavor ? 'resize' : 'migration', 'pre-migrating');
    this.#model.setServer(server, { taskState: 'resize_prep', preResizeVmState: server.vmState });
    const size = flavor ?? server;
    const half = server.migrationMs / 2;
    this.#stepAfter(m, this.#t.scheduleMs, () => {
      const dest = this.pickDestination({ ...server, ...size }, requested);
      if (!dest) {
        this.#noValidHost(m, server);
        return;
      }
      this.#model.setMigration(m, {
        status: 'migrating',
        destCompute: dest.serviceHost,
        destNode: dest.hostname,
        sourceNode: server.node,
      });
      this.#model.setServer(server, { taskState: 'resize_migrating' });
      if (this.#faults.failMigrations(server.id)) {
        this.#stepAfter(m, half, () => this.#fail(m, server));
        return;
      }
      if (this.#faults.hangMigrations(server.id)) return;
      this.#stepAfter(m, half, () => {
        this.#model.setMigration(m, { status: 'post-migrating' });
        this.#model.setServer(server, {
          taskState: 'resize_migrated',
          host: dest.serviceHost,
          node: dest.hostname,
          ...(flavor
            ? {
                ...flavor,
                preResizeFlavor: { vcpus: server.vcpus, ramMb: server.ramMb, diskGb: server.diskGb },
              }
            : {}),
        });
        this.#stepAfter(m, half, () => {
          this.#model.setMigration(m, { status: 'finished' });
          this.#model.setServer(server, { vmState: 'resized', taskState: null });
        });
      });
    });
    return m;
  }

  confirmResize(server: Server, m: Migration): void {
    this.#model.setMigration(m, { status: 'confirming' });
    this.#stepAfter(m, this.#t.resizeFinishMs, () => {
      this.#model.setServer(server, { vmState: server.preResizeVmState ?? 'active', taskState: null });
      this.#model.setMigration(m, { status: 'confirmed' });
    });
  }

  revertResize(server: Server, m: Migration): void {
    this.#model.setMigration(m, { status: 'reverting' });
    this.#model.setServer(server, { taskState: 'resize_reverting' });
    this.#stepAfter(m, this.#t.resizeFinishMs, () => {
      const node = this.#model.nodeOfHost(m.sourceCompute);
      this.#model.setServer(server, {
        host: m.sourceCompute,
        node: m.sourceNode ?? node?.hostname ?? m.sourceCompute,
        vmState: server.preResizeVmState ?? 'active',
        taskState: null,
        ...server.preResizeFlavor,
      });
      this.#model.setMigration(m, { status: 'reverted' });
    });
  }
}
