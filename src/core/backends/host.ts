// The plugin host: runs every backend for one node side by side and wraps them with what backends
// must not carry themselves — deadlines, error containment, record persistence, metrics. A plugin
// that throws becomes a failed Outcome (and a log line and a metric), never a crash.
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { isDrainerError, isExpectedFailure, TimeoutError } from '../../errors.ts';
import { MemoryFall, memoryLeft } from './memory-left.ts';
import { countItems, countPlans } from './vm-count.ts';
import type {
  BackendPlugin,
  NodeRef,
  Outcome,
  Plan,
  PlanOptions,
  PluginRecord,
  StrandedChange,
  StrandedOptions,
  WorkloadProgress,
} from './plugin.ts';

/** Where plugin records live: memory for run-once, the Node annotation for the agent (core/record/record.ts). */
export interface RecordStore {
  get(plugin: string): PluginRecord | undefined;
  save(plugin: string, record: PluginRecord): Promise<void>;
}

export class MemoryRecordStore implements RecordStore {
  readonly #records = new Map<string, PluginRecord>();

  constructor(initial: Readonly<Record<string, PluginRecord>> = {}) {
    for (const [k, v] of Object.entries(initial)) this.#records.set(k, v);
  }

  get(plugin: string): PluginRecord | undefined {
    return this.#records.get(plugin);
  }

  async save(plugin: string, record: PluginRecord): Promise<void> {
    this.#records.set(plugin, structuredClone<PluginRecord>(record));
  }

  toJSON(): Record<string, PluginRecord> {
    return Object.fromEntries(this.#records);
  }
}

/** An Outcome as the host returns it: `error` is set when the plugin threw (callers map it to exit codes). */
export interface HostOutcome extends Outcome {
  readonly error?: unknown;
}

export interface PlanResult {
  readonly plugin: string;
  readonly plan?: Plan;
  readonly error?: unknown;
}

export interface EvacuateOptions {
  signal: AbortSignal;
  deadline: Date;
  trigger: string;
  dryRun: boolean;
  abortOnCancel: boolean;
  records: RecordStore;
  onProgress?: (plugin: string, items: readonly WorkloadProgress[]) => void;
}

export interface RestoreOptions {
  signal: AbortSignal;
  dryRun: boolean;
  records: RecordStore;
}

/** The stranded changes the plugins found, and the plugins that could not look (asked again later). */
export interface StrandedResult {
  readonly found: readonly { readonly plugin: string; readonly change: StrandedChange }[];
  readonly failed: readonly string[];
}

export interface RestoreResult {
  plugin: string;
  ok: boolean;
  message?: string;
  error?: unknown;
}

export interface PluginHostOptions {
  plugins: readonly BackendPlugin[];
  log: Logger;
  metrics?: Metrics;
  /** How long a plugin may take to return after its signal was aborted before the host stops waiting. */
  abandonAfterMs?: number;
}

const MOVES = new Set(['live-migrate', 'cold-migrate', 'confirm-resize']);

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Resolves with the promise, or with `onAbandon()` once `signal` has been aborted for `graceMs`. */
function settleWithin<T>(
  p: Promise<T>,
  signal: AbortSignal,
  graceMs: number,
  onAbandon: () => T,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const abandoned = new Promise<T>((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve(onAbandon()), graceMs);
      timer.unref();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([p, abandoned]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  });
}

export class PluginHost {
  readonly plugins: readonly BackendPlugin[];
  readonly #log: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #abandonAfterMs: number;

  constructor(opts: PluginHostOptions) {
    this.plugins = opts.plugins;
    this.#log = opts.log;
    this.#metrics = opts.metrics;
    this.#abandonAfterMs = opts.abandonAfterMs ?? 30_000;
    // 0 from the start: an alert on the series sees "nothing left behind", not "no data"
    for (const p of this.plugins) this.#metrics?.restoreFailed.set({ plugin: p.name }, 0);
  }

  /** Every plugin's plan, side by side; one failing plugin does not hide the others' plans. */
  async planAll(node: NodeRef, signal: AbortSignal, opts?: PlanOptions): Promise<PlanResult[]> {
    return Promise.all(
      this.plugins.map(async (p): Promise<PlanResult> => {
        try {
          const plan = await p.plan(node, signal, opts);
          const count = countPlans([plan]);
          this.#countVms(p.name, count.names.length, count.stopped);
          return { plugin: p.name, plan };
        } catch (error) {
          this.#failed(p.name, 'plan', error);
          return { plugin: p.name, error };
        }
      }),
    );
  }

  /** Every plugin's plan; throws the first plugin error (after all have finished). */
  async plan(node: NodeRef, signal: AbortSignal, opts?: PlanOptions): Promise<Plan[]> {
    const results = await this.planAll(node, signal, opts);
    const failed = results.find((r) => r.error !== undefined);
    if (failed) throw failed.error;
    return results.map((r) => r.plan as Plan);
  }

  async evacuate(node: NodeRef, opts: EvacuateOptions): Promise<HostOutcome[]> {
    const ac = new AbortController();
    const onOuterAbort = () => ac.abort(opts.signal.reason);
    if (opts.signal.aborted) onOuterAbort();
    else opts.signal.addEventListener('abort', onOuterAbort, { once: true });
    const msLeft = Math.max(0, opts.deadline.getTime() - Date.now());
    const deadlineTimer = setTimeout(
      () => ac.abort(new TimeoutError(`evacuation deadline ${opts.deadline.toISOString()} passed`)),
      msLeft,
    );
    deadlineTimer.unref();
    try {
      return await Promise.all(this.plugins.map((p) => this.#evacuateOne(p, node, opts, ac.signal)));
    } finally {
      clearTimeout(deadlineTimer);
      opts.signal.removeEventListener('abort', onOuterAbort);
    }
  }

  async #evacuateOne(
    plugin: BackendPlugin,
    node: NodeRef,
    opts: EvacuateOptions,
    signal: AbortSignal,
  ): Promise<HostOutcome> {
    const name = plugin.name;
    const log = this.#log.child({ plugin: name, node: node.name });
    let last: readonly WorkloadProgress[] = [];
    const started = new Set<string>(); // id#attempt of every migration seen running, counted once
    const stalls = new Set<string>(); // id#attempt of every stall, counted once
    const fall = new MemoryFall();
    const failed = (message: string, error?: unknown): HostOutcome => ({
      plugin: name,
      succeeded: false,
      workloads: last,
      message,
      ...(error === undefined ? {} : { error }),
    });
    const run = async (): Promise<HostOutcome> => {
      try {
        const outcome = await plugin.evacuate(node, {
          log,
          signal,
          deadline: opts.deadline,
          trigger: opts.trigger,
          dryRun: opts.dryRun,
          abortOnCancel: opts.abortOnCancel,
          record: opts.records.get(name),
          save: (record) => opts.records.save(name, record),
          progress: (items) => {
            last = items;
            this.#countStarts(name, items, started);
            this.#metrics?.migrationsInFlight.set(
              { plugin: name },
              items.filter((i) => i.state === 'migrating').length,
            );
            this.#countCopies(name, items, stalls);
            this.#countMemory(name, items, fall);
            const here = countItems(items);
            this.#countVms(name, here.onHost, here.stopped);
            opts.onProgress?.(name, items);
          },
        });
        const stopped = !outcome.succeeded && signal.aborted && !outcome.message;
        return { ...outcome, plugin: name, ...(stopped ? { message: messageOf(signal.reason) } : {}) };
      } catch (error) {
        this.#failed(name, 'evacuate', error);
        return failed(
          signal.aborted ? `${messageOf(signal.reason)}: ${messageOf(error)}` : messageOf(error),
          error,
        );
      }
    };
    const outcome = await settleWithin(run(), signal, this.#abandonAfterMs, () => {
      this.#failed(name, 'evacuate', new TimeoutError('plugin did not stop after its signal was aborted'));
      return failed(`${messageOf(signal.reason)}; the plugin did not stop within ${this.#abandonAfterMs} ms`);
    });
    this.#count(outcome);
    this.#metrics?.evacuationMemoryLeft.set({ plugin: name }, 0); // nothing is being moved any more
    return outcome;
  }

  /** drainer_node_vms: the one count of VMs on the host (vm-count.ts). */
  #countVms(plugin: string, onHost: number, stopped: number): void {
    this.#metrics?.nodeVms.set({ plugin, state: 'running' }, onHost - stopped);
    this.#metrics?.nodeVms.set({ plugin, state: 'stopped' }, stopped);
  }

  /** The memory left to move, and when it last fell (for the alert on an evacuation that is stuck). */
  #countMemory(plugin: string, items: readonly WorkloadProgress[], fall: MemoryFall): void {
    const left = memoryLeft(items);
    if (!this.#metrics || !left) return;
    this.#metrics.evacuationMemoryLeft.set({ plugin }, left.leftBytes);
    this.#metrics.evacuationMemoryFell.set(
      { plugin },
      fall.seen(left.leftBytes, Date.now(), left.awaitingOwnerBytes),
    );
  }

  async restore(node: NodeRef, opts: RestoreOptions): Promise<RestoreResult[]> {
    return Promise.all(
      this.plugins.map(async (p): Promise<RestoreResult> => {
        const log = this.#log.child({ plugin: p.name, node: node.name });
        try {
          await p.restore(node, {
            log,
            signal: opts.signal,
            dryRun: opts.dryRun,
            record: opts.records.get(p.name),
            save: (record) => opts.records.save(p.name, record),
          });
          this.#metrics?.restoreFailed.set({ plugin: p.name }, 0);
          return { plugin: p.name, ok: true };
        } catch (error) {
          this.#failed(p.name, 'restore', error);
          this.#metrics?.restoreFailed.set({ plugin: p.name }, 1);
          return { plugin: p.name, ok: false, message: messageOf(error), error };
        }
      }),
    );
  }

  /** The stop of an agent no successor follows, mid-evacuation: each plugin finishes what only it would (plugin.ts). */
  async leftForGood(node: NodeRef, records: Pick<RecordStore, 'get'>, signal: AbortSignal): Promise<void> {
    await Promise.all(
      this.plugins.map(async (p) => {
        if (!p.leftForGood) return;
        const log = this.#log.child({ plugin: p.name, node: node.name });
        await p
          .leftForGood(node, { log, signal, record: records.get(p.name) })
          .catch((error: unknown) => this.#failed(p.name, 'finish at the last stop', error));
      }),
    );
  }

  /** Every plugin's stranded change (no record on the node); a plugin that fails is logged and named in `failed`. */
  async stranded(node: NodeRef, opts: StrandedOptions): Promise<StrandedResult> {
    const failed: string[] = [];
    const found = await Promise.all(
      this.plugins.map(async (p) => {
        if (!p.stranded) return undefined;
        try {
          const change = await p.stranded(node, opts);
          return change ? { plugin: p.name, change } : undefined;
        } catch (error) {
          this.#failed(p.name, 'stranded check', error);
          failed.push(p.name);
          return undefined;
        }
      }),
    );
    return { found: found.filter((f) => f !== undefined), failed };
  }

  #failed(plugin: string, operation: string, error: unknown): void {
    this.#metrics?.pluginErrors.inc({ plugin, operation });
    const code = isDrainerError(error) ? error.code : undefined;
    // Expected conditions: bad input (credentials, rights, host mapping) and an API that gave no
    // answer (refused, DNS, TLS, timeout). The caller reports them in one line (Outcome, record,
    // CLI); the stack adds nothing, so it is only at debug.
    if (isExpectedFailure(error))
      this.#log.debug({ plugin, operation, code, reason: messageOf(error) }, `${plugin} ${operation} failed`);
    else this.#log.error({ plugin, operation, code, err: error }, `${plugin} ${operation} failed`);
  }

  /** Copy progress as metrics: stalls once per attempt, and what is left / not converging now. */
  #countCopies(plugin: string, items: readonly WorkloadProgress[], seen: Set<string>): void {
    const m = this.#metrics;
    if (!m) return;
    m.workloadsAwaitingOwner.set(
      { plugin },
      items.filter((w) => w.state === 'pending' && w.action === 'notify').length,
    );
    const copying = items.filter((w) => w.state === 'migrating' && w.copy);
    m.migrationsNotConverging.set({ plugin }, copying.filter((w) => w.copy?.converging === false).length);
    m.migrationMemoryRemaining.set(
      { plugin },
      copying.reduce((sum, w) => sum + (w.copy?.remainingBytes ?? 0), 0),
    );
    for (const w of copying) {
      const key = `${w.id}#${w.attempts}`;
      if (!w.copy?.stallAction || seen.has(key)) continue;
      seen.add(key);
      m.migrationStalls.inc({ plugin, action: w.copy.stallAction });
    }
  }

  #countStarts(plugin: string, items: readonly WorkloadProgress[], seen: Set<string>): void {
    for (const w of items) {
      const key = `${w.id}#${w.attempts}`;
      if (w.state !== 'migrating' || seen.has(key)) continue;
      seen.add(key);
      this.#metrics?.migrationsStarted.inc({ plugin });
    }
  }

  /** Migration results come from the final workload lines, so plugins never touch metrics. */
  #count(outcome: HostOutcome): void {
    const m = this.#metrics;
    if (!m) return;
    m.migrationsInFlight.set({ plugin: outcome.plugin }, 0);
    for (const w of outcome.workloads) {
      if (!MOVES.has(w.action) || (w.state !== 'succeeded' && w.state !== 'failed')) continue;
      m.migrations.inc({ plugin: outcome.plugin, result: w.state });
      if (w.durationMs !== undefined)
        m.migrationDuration.observe({ plugin: outcome.plugin }, w.durationMs / 1000);
    }
  }
}
