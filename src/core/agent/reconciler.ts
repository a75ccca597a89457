// The level-triggered state machine of one node. Every run re-reads the Node, the
// NodeMaintenances and the record; the event that caused the run is never trusted.
import { CancelledError, ConfigError, RecordUnreadableError, UnknownNodeError } from '../../errors.ts';
import { MemoryRecordStore, type RestoreResult } from '../backends/host.ts';
import {
  desiredOf,
  desiredState,
  optOutReason,
  optedOut,
  viewMaintenances,
  type Desired,
} from './desired.ts';
import { restoreTarget } from '../restore/still-evacuating.ts';
import { evacuate, type EvacuatedDesire } from '../evacuation/evacuate.ts';
import { evacuatedMaintenance } from '../maintenance/maintenance-status.ts';
import {
  markInvalid,
  markOrphan,
  releaseMaintenances,
  takeMaintenance,
  writeMaintenanceStatus,
} from '../maintenance/maintenance-sync.ts';
import type { MaintenanceObject, NodeObject } from '../cluster/objects.ts';
import type { RunResult } from './queue.ts';
import {
  readRecord,
  STATE_ANNOTATION,
  unreadableText,
  type NodeRecord,
  type RecordRead,
} from '../record/record.ts';
import { restoreNode } from '../restore/restore.ts';
import { retryDelayMs } from './retry-backoff.ts';
import { recheckEveryMs, reopen, strayOnHost } from '../gate/recheck.ts';
import { stoppedByWriter } from '../record/record-write.ts';
import { dropStaleRelease, readAtPassStart, syncGate, wantGate } from '../gate/step.ts';
import type { NodeRun, ReconcilerDeps } from './run-context.ts';
import type { DrainGate } from '../gate/gate.ts';
import { forceRestore, reportUnreadable } from '../record/unreadable.ts';
import { dropStaleStartNow } from '../fleet/start-now.ts';
import { StrandedLooks } from './stranded-looks.ts';
import { liveView, newNodeRun, type LiveState } from './node-run.ts';

export type { ReconcilerDeps, EvacuationHost, ReconcilerMetrics } from './run-context.ts';

export class Reconciler {
  readonly #deps: ReconcilerDeps;
  readonly #active = new Map<string, AbortController>();
  readonly #live = new Map<string, LiveState>();
  /** Events being written: never awaited on the way (a cordon must reach Nova first), only at a pass's end. */
  readonly #events = new Set<Promise<void>>();
  readonly #strandedLooks: StrandedLooks;
  /** When an Evacuated node's host was last listed (after Evacuated: once per resync). */
  readonly #checkedAt = new Map<string, number>();

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#strandedLooks = new StrandedLooks(deps.config.strandedCheckInterval ?? 0, () =>
      this.#now().getTime(),
    );
  }

  /** The cluster port the passes use (its Node reads and guarded record writes). */
  get cluster(): ReconcilerDeps['cluster'] {
    return this.#deps.cluster;
  }

  /** The node's drain gate (absent: drainGate.enabled false, or a dry run). */
  get gate(): DrainGate | undefined {
    return this.#deps.gate;
  }

  /** Is an evacuation of this node under way (in this process)? */
  evacuating(nodeName: string): boolean {
    return this.#active.has(nodeName);
  }

  /** The agent's watches saw the Node or a NodeMaintenance change while the node evacuates (or waits to). */
  observe(nodeName: string, node: NodeObject, maintenances: readonly MaintenanceObject[]): void {
    const live = this.#live.get(nodeName);
    if (!live) return;
    live.node = node;
    live.maintenances = maintenances;
    // an operator's release while it evacuates: the gate follows the Node as it is now
    wantGate(this.#deps.gate, nodeName, live.record(), node);
    for (const wake of live.wakes) wake();
  }

  /** Stops the running evacuation of the node (desired changed); the next run restores. */
  cancel(nodeName: string, why: string): boolean {
    const ctl = this.#active.get(nodeName);
    if (!ctl || ctl.signal.aborted) return false;
    this.#deps.log.info({ node: nodeName, why }, 'cancelling evacuation');
    ctl.abort(new CancelledError(why));
    return true;
  }

  /**
   * One pass for the node. Throws on API errors (the queue retries with backoff). `watched`: the
   * NodeMaintenances as the agent's own watch has them (synced), read instead of a cluster-wide list.
   */
  async reconcile(nodeName: string, signal: AbortSignal, watched?: Watched): Promise<RunResult> {
    return this.#flushing(() => this.#reconcile(nodeName, signal, watched));
  }

  /** Runs a pass, then waits for its Events, so a caller that returns finds them written. */
  async #flushing<T>(pass: () => Promise<T>): Promise<T> {
    try {
      return await pass();
    } finally {
      while (this.#events.size) await Promise.all([...this.#events]);
    }
  }

  async #reconcile(nodeName: string, signal: AbortSignal, watched?: Watched): Promise<RunResult> {
    const { config } = this.#deps;
    const resync: RunResult = { requeueAfterMs: config.resyncInterval * 1000 };
    const [node, maintenances] = await this.#fetch(nodeName, watched);
    if (!node) {
      this.#deps.log.warn({ node: nodeName }, 'node not found; waiting for it');
      return resync;
    }
    const read = readRecord(node.metadata?.annotations?.[STATE_ANNOTATION]);
    if (read.kind === 'unreadable') {
      const run = this.#run(nodeName, node, maintenances, undefined, signal);
      return reportUnreadable(run, read.problem, resync);
    }
    this.#deps.metrics?.recordUnreadable?.(false);
    const record = read.kind === 'ok' ? read.record : undefined;
    const run = this.#run(nodeName, node, maintenances, record, signal);
    // the gate becomes what the record says at every pass (and after every write of the record)
    wantGate(this.#deps.gate, nodeName, readAtPassStart(record), node);
    await dropStaleRelease(run, record);
    await markInvalid(run, viewMaintenances(nodeName, maintenances));

    const desired = desiredOf(run);
    await dropStaleStartNow(run, record, desired.state === 'InService');
    run.log.debug({ desired: desired.state, phase: record?.phase }, 'reconcile');
    this.#deps.metrics?.phase(record?.phase);
    // an opted-out node is reported, never evacuated (an evacuation already under way goes on)
    if (desired.state === 'Evacuated' && !record && optedOut(node))
      return this.#ignored(run, desired, resync);
    if (desired.state === 'Evacuated') return this.#toEvacuated(run, desired, resync);
    if (record) return restoreNode(run);
    const looked = await this.#stranded(run, true);
    await releaseMaintenances(run);
    return looked ? resync : this.#whenGateHolds(nodeName, resync);
  }

  /**
   * A stranded check put off until the gate holds comes back as the gate is seen holding, not a
   * resync later, and not by polling: at a thousand agents whose gates an overloaded API server
   * keeps from holding, a pass every 2 s each (a Node read apiece) kept it overloaded (issue 51).
   */
  #whenGateHolds(nodeName: string, resync: RunResult): RunResult {
    const gate = this.#deps.gate;
    const ms = resync.requeueAfterMs ?? 0;
    if (!gate || ms <= 0) return resync;
    return { ...resync, requeueWhen: (signal) => gate.whenHeld(nodeName, ms, signal) };
  }

  async #ignored(run: NodeRun, desired: EvacuatedDesire, resync: RunResult): Promise<RunResult> {
    const text = `node ${run.nodeName} ${optOutReason(run.node)}: not evacuated (trigger ${desired.trigger})`;
    run.log.info({ trigger: desired.trigger }, text);
    await run.event('Warning', 'EvacuationBlocked', text);
    await this.#stranded(run, false);
    return resync;
  }

  /** No record: is a change of drainer's stranded on the node (stranded-looks.ts says when it looks)? */
  #stranded(run: NodeRun, inService: boolean): Promise<boolean> {
    return this.#strandedLooks.look(run, inService);
  }

  /**
   * One evacuation now, whatever the desired state says (run-once). Answers the record it ended
   * with. A running agent on the node would undo it unless the node is cordoned.
   */
  async evacuateNow(nodeName: string, signal: AbortSignal, trigger: string): Promise<NodeRecord | undefined> {
    return this.#flushing(() => this.#evacuateNow(nodeName, signal, trigger)).catch(
      stoppedByWriter(nodeName, 'run-once'),
    );
  }

  async #evacuateNow(
    nodeName: string,
    signal: AbortSignal,
    trigger: string,
  ): Promise<NodeRecord | undefined> {
    const run = readable(nodeName, await this.#read(nodeName, signal)).run;
    if (!run.store.current && optedOut(run.node))
      throw new ConfigError([
        {
          path: '', // the message names the node: no "node: node …" stutter
          message: `node ${nodeName} ${optOutReason(run.node)}: drainer never evacuates it`,
        },
      ]);
    const resync: RunResult = { requeueAfterMs: this.#deps.config.resyncInterval * 1000 };
    if (run.store.current?.phase !== 'Evacuated')
      await this.#toEvacuated(run, { state: 'Evacuated', trigger }, resync, true);
    // run-once honours the gate: released only when evacuated, else held
    await syncGate(run);
    return run.store.current;
  }

  /**
   * One restore now (drainer restore): undoes what the record says; answers the plugins' results.
   * An unreadable record is refused unless `force`: then what is recognisably ours is undone.
   */
  async restoreNow(nodeName: string, signal: AbortSignal, force = false): Promise<RestoreResult[]> {
    return this.#flushing(() => this.#restoreNow(nodeName, signal, force)).catch(
      stoppedByWriter(nodeName, 'restore'),
    );
  }

  async #restoreNow(nodeName: string, signal: AbortSignal, force: boolean): Promise<RestoreResult[]> {
    const got = await this.#read(nodeName, signal);
    if (got.read.kind === 'unreadable' && force) return forceRestore(got.run, got.text);
    const { run } = readable(nodeName, got);
    if (run.store.current) return (await restoreNode(run)).results;
    // no record: the plugins still check what they own (nova: a service disabled with our prefix,
    // servers it stopped and marked), and give nothing back to a node still to be evacuated
    if (force) return forceRestore(run, undefined);
    const { ref } = await restoreTarget(run);
    return this.#deps.host.restore(ref, {
      signal,
      dryRun: this.#deps.config.dryRun,
      records: new MemoryRecordStore(),
    });
  }

  /**
   * The Node, and the NodeMaintenances read side by side (a cordon's reaction time is a chain of
   * requests). The agent's watch has them: a list of every group's, cluster-wide, at each pass of
   * every agent is the per-node-agent cost that grows with the fleet (issue 38); only a pass without
   * a watch (run-once, restore) lists them. The watch may not have our own last write yet: the event
   * that brings it runs the next pass, and every write carries the resourceVersion it read.
   */
  #fetch(
    nodeName: string,
    watched?: Watched,
  ): Promise<[NodeObject | undefined, readonly MaintenanceObject[]]> {
    const { cluster, config } = this.#deps;
    return Promise.all([
      cluster.getNode(nodeName),
      config.nodeMaintenance.mode === 'off' ? [] : (watched?.maintenances ?? cluster.listMaintenances()),
    ]);
  }

  async #read(nodeName: string, signal: AbortSignal): Promise<ReadRun> {
    const [node, maintenances] = await this.#fetch(nodeName);
    if (!node) throw new UnknownNodeError(nodeName);
    const text = node.metadata?.annotations?.[STATE_ANNOTATION];
    const read = readRecord(text);
    const record = read.kind === 'ok' ? read.record : undefined;
    return { run: this.#run(nodeName, node, maintenances, record, signal), read, text };
  }

  /** Marks a NodeMaintenance that names a missing node Failed (any agent may; one write wins). */
  async checkMaintenance(nm: MaintenanceObject): Promise<void> {
    if (this.#deps.config.nodeMaintenance.mode !== 'own') return;
    const result = await markOrphan(this.#deps.cluster, nm, this.#now());
    if (result === 'marked')
      this.#deps.log.warn({ nodeMaintenance: nm.metadata?.name }, 'NodeMaintenance names a missing node');
  }

  async #toEvacuated(
    run: NodeRun,
    desired: EvacuatedDesire,
    resync: RunResult,
    now = false,
  ): Promise<RunResult> {
    const rec = run.store.current;
    if (rec?.phase === 'Evacuated') {
      const everyMs = recheckEveryMs(run, resync.requeueAfterMs ?? Infinity);
      const stray = this.#recheckDue(run, everyMs) ? await strayOnHost(run) : [];
      if (!stray.length) return this.#keepEvacuated(run, desired, rec, { requeueAfterMs: everyMs });
      await reopen(run, stray);
    }
    if (!now && rec?.phase === 'Failed' && rec.trigger === desired.trigger) {
      const wait = this.#retryWait(rec);
      if (wait > 0) return { requeueAfterMs: wait };
    }
    const ctl = new AbortController();
    const onShutdown = () => ctl.abort(run.signal.reason);
    run.signal.addEventListener('abort', onShutdown, { once: true });
    this.#active.set(run.nodeName, ctl);
    const live: LiveState = {
      node: run.node,
      maintenances: run.maintenances,
      wakes: new Set(),
      record: () => run.store.current,
    };
    this.#live.set(run.nodeName, live);
    try {
      const result = await evacuate({ ...run, live: liveView(live) }, desired, {
        signal: ctl.signal,
        cancelled: () => ctl.signal.aborted && !run.signal.aborted,
      });
      if (run.store.current?.phase === 'Evacuated') this.#checkedAt.set(run.nodeName, this.#now().getTime());
      return result;
    } finally {
      this.#active.delete(run.nodeName);
      this.#live.delete(run.nodeName);
      run.signal.removeEventListener('abort', onShutdown);
    }
  }

  /** Already evacuated: only follow a changed trigger (take or release NodeMaintenances); move nothing. */
  async #keepEvacuated(
    run: NodeRun,
    desired: EvacuatedDesire,
    rec: NodeRecord,
    resync: RunResult,
  ): Promise<RunResult> {
    if (rec.trigger !== desired.trigger) await run.store.update({ trigger: desired.trigger });
    const nm = desired.maintenance;
    if (nm && this.#deps.config.nodeMaintenance.mode === 'own') {
      await takeMaintenance(run, nm);
      if (nm.status?.phase !== 'Succeeded') {
        const status = evacuatedMaintenance('node already evacuated', run.now());
        await writeMaintenanceStatus(run, nm, status, true);
      }
    } else if (rec.maintenance) {
      await run.store.update({ maintenance: undefined });
    }
    await releaseMaintenances(run, nm);
    return resync;
  }

  /**
   * An Evacuated node's host is listed once per resync, or per REBOOT_RECHECK_MS for a declared
   * reboot (and not on the pass that evacuated it).
   */
  #recheckDue(run: NodeRun, everyMs: number): boolean {
    const now = this.#now().getTime();
    const last = this.#checkedAt.get(run.nodeName);
    // a little under the interval, so the resync that comes at its period is not a hair too early
    if (last !== undefined && now - last < everyMs * 0.9) return false;
    this.#checkedAt.set(run.nodeName, now);
    return true;
  }

  /** A Failed evacuation is retried after a doubling backoff from the attempt (our own writes must not loop it). */
  #retryWait(rec: NodeRecord): number {
    const at = rec.attemptedAt ? Date.parse(rec.attemptedAt) : NaN;
    if (Number.isNaN(at)) return 0;
    const delay = retryDelayMs(rec, this.#deps.config.resyncInterval);
    return Math.max(0, at + delay - this.#now().getTime());
  }

  #now(): Date {
    return this.#deps.now?.() ?? new Date();
  }

  #run(
    nodeName: string,
    node: NodeObject,
    maintenances: readonly MaintenanceObject[],
    record: NodeRecord | undefined,
    signal: AbortSignal,
  ): NodeRun {
    return newNodeRun({
      deps: this.#deps,
      nodeName,
      node,
      maintenances,
      record,
      signal,
      now: () => this.#now(),
      liveNode: () => this.#live.get(nodeName)?.node,
      events: this.#events,
    });
  }
}

/** What the agent's watches hold, passed to a pass instead of reading it again. */
export interface Watched {
  readonly maintenances: readonly MaintenanceObject[];
}

interface ReadRun {
  readonly run: NodeRun;
  readonly read: RecordRead;
  readonly text: string | undefined;
}

/** Refuses to act on a record this version cannot read (the message names the way out). */
function readable(nodeName: string, got: ReadRun): ReadRun {
  if (got.read.kind === 'unreadable')
    throw new RecordUnreadableError(unreadableText(nodeName, got.read.problem));
  return got;
}

/** The desired state a watcher can compute from its cache (for the cancel check). */
export { desiredState };
export type { Desired };
