// The KubeVirt backend: trigger KubeVirt's own evacuation (drain taint and/or launcher-pod
// eviction), follow every migration to its end, and name what cannot move before the pod drain runs.
import type { KubevirtConfig } from '../../config/schema.ts';
import type {
  BackendPlugin,
  EvacuationContext,
  NodeRef,
  Outcome,
  Plan,
  PlanOptions,
  RestoreContext,
  StrandedChange,
  StrandedOptions,
  WorkloadProgress,
} from '../../core/backends/plugin.ts';
import type { Logger } from '../../observability/logger.ts';
import { kubevirtVerdict } from './capacity.ts';
import { arrivals } from './arrivals.ts';
import { vmiKey, type Classified } from './classify.ts';
import type { KubevirtApi } from './port.ts';
import { keeper } from './keeper.ts';
import { readRecord } from './record.ts';
import { restoreNode, strandedVms, type WaitDeps } from './restore.ts';
import { dryRunProgress, finalize, handledPods, outcomeOf, planned, plannedManual } from './report.ts';
import { waitForOthers } from './manual.ts';
import { shutDown } from './shutdown.ts';
import type { StopDeps } from './stopping.ts';
import { migrationDeadline } from './timeout.ts';
import { Tracker } from './tracker.ts';
import { abortOnCancel, CLEANUP_MS } from './unmark.ts';
import { halt, type HaltDeps } from './halt.ts';
import { ExternalController } from './external.ts';
import { Triggers, type RecordKeeper } from './triggers.ts';
import type { PodLite } from './types.ts';
import { ask, progressOf } from './asking.ts';
import { defaultSleep, follow, type Sleep } from './follow.ts';
import { Installed } from './installed.ts';
import { inventory } from './inventory.ts';

export interface KubevirtPluginDeps {
  readonly config: KubevirtConfig;
  readonly api: KubevirtApi;
  readonly log: Logger;
  /** Waits; may resolve or reject when the signal aborts. */
  readonly sleep?: Sleep;
  /** The clock the per-VMI timeouts and durations run on (a sandbox passes its scaled clock). */
  readonly now?: () => number;
}

const reasonText = (r: unknown): string =>
  r instanceof Error ? r.message : typeof r === 'string' ? r : 'stopped';

export class KubevirtPlugin implements BackendPlugin {
  readonly name = 'kubevirt';
  readonly #deps: KubevirtPluginDeps;
  readonly #now: () => number;
  readonly #installed: Installed;

  constructor(deps: KubevirtPluginDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#installed = new Installed({ ...deps, now: this.#now });
  }

  async plan(node: NodeRef, signal: AbortSignal, opts?: PlanOptions): Promise<Plan> {
    const settings = await this.#installed.settings(signal, true);
    if (!settings) return { plugin: this.name, workloads: [] };
    const classified = await inventory(this.#deps, node, settings, signal);
    if (node.mode === 'manual')
      return {
        plugin: this.name,
        location: node.name,
        workloads: classified.map((c) => plannedManual(c, node.name)),
      };
    const notifyTimeout = this.#deps.config.notifyTimeout;
    const plan = {
      plugin: this.name,
      location: node.name,
      workloads: classified.map((c) => planned(c, notifyTimeout)),
    };
    // only VMIs that will start a migration now need room (not those already migrating)
    const inFlight = (c: Classified) => {
      const m = c.vmi.status?.migrationState;
      return m !== undefined && !m.completed && !m.failed;
    };
    const movers = classified
      .filter((c) => (c.klass === 'migrate' || c.klass === 'notify') && !inFlight(c))
      .map((c) => ({ name: c.key, uid: c.vmi.metadata.uid }));
    if (!opts?.capacity || movers.length === 0) return plan;
    return { ...plan, capacity: await kubevirtVerdict(this.#deps.api, node.name, movers, signal) };
  }

  async evacuate(node: NodeRef, ctx: EvacuationContext): Promise<Outcome> {
    const { api, config } = this.#deps;
    const settings = await this.#installed.settings(ctx.signal);
    if (!settings)
      return { plugin: this.name, succeeded: true, workloads: [], message: 'KubeVirt not installed' };
    if (node.mode === 'manual' && !ctx.dryRun) return this.#waitForOthers(node, ctx);
    const classified = await inventory(this.#deps, node, settings, ctx.signal);
    if (ctx.dryRun)
      return outcomeOf(
        this.name,
        classified.map((c) => dryRunProgress(c, node.mode === 'manual')),
        [],
      );

    const record = keeper(readRecord(ctx.record), (r) => ctx.save(r));
    const triggers = new Triggers({
      api,
      node: node.name,
      log: ctx.log,
      drainTaintKey: settings.drainTaintKey,
      record,
    });
    const movers = classified.filter((c) => c.klass === 'migrate');
    const notifies = classified.filter((c) => c.klass === 'notify');
    const halts = classified.filter((c) => c.klass === 'halt');
    const externals = classified.filter((c) => c.klass === 'external').map((c) => c.vmi);
    const tracker = new Tracker({
      node: node.name,
      api,
      log: ctx.log,
      now: this.#now,
      deadline: (vmi) => migrationDeadline(vmi, config, settings.completionTimeoutPerGiB),
    });
    // kubevirt.external: mark: the VMI's own controller takes it off the node; drainer waits for that
    tracker.begin([...movers, ...notifies, ...classified.filter((c) => c.klass === 'external')]);
    // the drain taint moves every VMI of the node at once: VMIs that wait (notify) or stop need evictions
    const trigger = notifies.length + halts.length > 0 ? 'eviction' : config.trigger;
    if (trigger !== config.trigger)
      ctx.log.info(
        'drainer.dev/maintenance on a VMI of the node: evicting launcher pods instead of tainting',
      );
    const halted = halts.length ? await halt(halts, this.#haltDeps(node, record, ctx), ctx.signal) : [];
    const viaKubevirt = movers.filter((c) => c.strategy !== 'External');
    if (viaKubevirt.length > 0 && trigger !== 'eviction') await triggers.taint(ctx.signal);
    // KubeVirt's taint path ignores External VMIs; an eviction marks them (for drainer, or their controller)
    const toMark = [...externals, ...movers.filter((c) => c.strategy === 'External').map((c) => c.vmi)];
    if (toMark.length > 0) await triggers.evict(toMark, ctx.signal);
    const external = new ExternalController({
      api,
      node: node.name,
      log: ctx.log,
      now: this.#now,
      vmis: new Set([...movers, ...notifies].filter((c) => c.strategy === 'External').map((c) => c.key)),
    });

    const evictFrom =
      trigger === 'eviction'
        ? -Infinity
        : trigger === 'both'
          ? this.#now() + config.triggerGraceSeconds * 1000
          : Infinity;
    // notify: the owner has notifyTimeout to move it; then it is evicted like the others
    const asking = await ask(notifies, record, this.#now(), config.notifyTimeout);
    const mayEvict = (key: string) => !asking.vmis.has(key) || this.#now() >= asking.until(key);
    await follow(
      {
        tracker,
        triggers,
        external,
        evict: { from: evictFrom, may: mayEvict },
        now: this.#now,
        sleep: this.#deps.sleep ?? defaultSleep,
        pollMs: config.pollInterval * 1000,
        progress: () => progressOf(classified, tracker, asking, this.#now),
      },
      ctx,
    );

    const byHalt = new Map(halted.map((w) => [w.name, w]));
    let workloads = progressOf(classified, tracker, asking, this.#now).map((w) => byHalt.get(w.name) ?? w);
    if (ctx.signal.aborted) {
      await abortOnCancel(this.#deps.api, node, { tracker, triggers, externals: externals.map(vmiKey) }, ctx);
    } else {
      workloads = await this.#shutdownBlocked(node, classified, tracker, workloads, ctx);
    }
    workloads = finalize(workloads, ctx.signal.aborted ? reasonText(ctx.signal.reason) : undefined);
    ctx.progress(workloads);
    const pods = await api
      .listVmPods(node.name, ctx.signal.aborted ? AbortSignal.timeout(CLEANUP_MS) : ctx.signal)
      .catch(() => [] as PodLite[]);
    const outcome = outcomeOf(this.name, workloads, handledPods(classified, pods));
    if (ctx.signal.aborted || !outcome.succeeded) return outcome;
    // a VMI that came while the ones listed at the start moved: the node is not empty, so the gate
    // holds and the next attempt moves it
    const came = await arrivals(api, node.name, classified, pods, ctx.signal);
    return came.length ? { ...outcome, succeeded: false, message: came.join('; ') } : outcome;
  }

  async restore(node: NodeRef, ctx: RestoreContext): Promise<void> {
    await restoreNode(node, ctx, this.#waitDeps());
  }

  /** No record on the node: starts the VMs whose stop mark names it (or a Node now gone), when in service. */
  async stranded(node: NodeRef, opts: StrandedOptions): Promise<StrandedChange | undefined> {
    if (!(await this.#installed.settings(opts.signal))) return undefined;
    return strandedVms(node, opts, this.#waitDeps());
  }

  /** How a restart waits for a VM (its timeout: how long one restore waits before the core retries). */
  #waitDeps(): WaitDeps {
    const { api, config } = this.#deps;
    return {
      api,
      now: this.#now,
      sleep: this.#sleep,
      pollMs: config.pollInterval * 1000,
      timeoutMs: (config.migrationTimeout ?? config.migrationTimeoutMargin) * 1000,
    };
  }

  /** The plugin's sleep; one that is aborted resolves (the caller's loop sees the signal). */
  readonly #sleep = async (ms: number, signal: AbortSignal): Promise<void> => {
    try {
      await (this.#deps.sleep ?? defaultSleep)(ms, signal);
    } catch {
      // aborted
    }
  };

  #haltDeps(node: NodeRef, record: RecordKeeper, ctx: EvacuationContext): HaltDeps {
    return { ...this.#stopDeps(node, ctx), record };
  }

  /** How a stop (maintenance: stop, nonMigratable: shutdown) waits for the VMIs it stops. */
  #stopDeps(node: NodeRef, ctx: EvacuationContext): StopDeps {
    const { api, config } = this.#deps;
    return {
      api,
      node: node.name,
      log: ctx.log,
      now: this.#now,
      sleep: this.#sleep,
      pollMs: config.pollInterval * 1000,
      // stopping a guest is no copy: the fixed deadline, else the margin
      timeoutMs: (config.migrationTimeout ?? config.migrationTimeoutMargin) * 1000,
    };
  }

  /** nonMigratable: shutdown, once every mover has moved: stop the VMIs that cannot migrate. */
  async #shutdownBlocked(
    node: NodeRef,
    classified: readonly Classified[],
    tracker: Tracker,
    workloads: WorkloadProgress[],
    ctx: EvacuationContext,
  ): Promise<WorkloadProgress[]> {
    const victims = classified.filter((c) => c.klass === 'blocked' && c.action === 'shutdown');
    if (victims.length === 0 || tracker.pending().length > 0 || tracker.failed()) return workloads;
    const results = await shutDown(victims, this.#stopDeps(node, ctx), ctx.signal);
    const byName = new Map(results.map((r) => [r.name, r]));
    return workloads.map((w) => byName.get(w.name) ?? w);
  }

  /** Node mode manual: move nothing, wait until someone else has emptied the node. */
  #waitForOthers(node: NodeRef, ctx: EvacuationContext): Promise<Outcome> {
    const { api, config, sleep } = this.#deps;
    const pollMs = config.pollInterval * 1000;
    return waitForOthers(this.name, node.name, { api, pollMs, sleep: sleep ?? defaultSleep }, ctx);
  }
}
