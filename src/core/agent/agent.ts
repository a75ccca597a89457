// One agent per node: watches of its own Node and of NodeMaintenances feed a per-node serial
// queue that runs the reconciler. Events only enqueue keys (the reconciler re-reads the world),
// except that a change which makes the node InService cancels a running evacuation at once.
import { NodeHeldError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Slot } from '../fleet/types.ts';
import { desiredState, MAINTENANCE_NODE_ANNOTATION, type MaintenanceMode } from './desired.ts';
import type { MaintenanceObject, NodeObject } from '../cluster/objects.ts';
import { changesWhatIsRead } from './node-change.ts';
import { KeyedQueue } from './queue.ts';
import type { Reconciler } from './reconciler.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';

export type WatchEvent = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchCallbacks<T> {
  onEvent(type: WatchEvent, obj: T): void;
  /** After each (re)list. */
  onSynced(): void;
  readonly signal: AbortSignal;
}

/** Where the agent's objects come from (kube-sources.ts for a real cluster). Each runs until the signal aborts. */
export interface WatchSources {
  watchNode(cb: WatchCallbacks<NodeObject>): Promise<void>;
  watchMaintenances(cb: WatchCallbacks<MaintenanceObject>): Promise<void>;
}

export interface AgentOptions {
  readonly nodeName: string;
  readonly reconciler: Reconciler;
  readonly sources: WatchSources;
  readonly mode: MaintenanceMode;
  /** triggers.taints (the cancel check must agree with the reconciler). */
  readonly taints?: readonly string[];
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** Queue backoff after a failed reconcile (default 1 s → 60 s). */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** The node's agent Lease (node-lease.ts): nothing is reconciled until it is ours. */
  readonly lease?: {
    readonly name: string;
    acquire(signal: AbortSignal, onWait?: (holder: string) => void): Promise<Slot | undefined>;
  };
  /** Checks the clouds' credentials at start and each resync; its reasons make the agent not ready. */
  readonly cloudAuth?: { reasons(): string[]; run(stop?: AbortSignal): Promise<void> };
  /** The node's drain gate: its objects watched (each change looks again), ended at an uninstall. */
  readonly gate?: { watch(signal: AbortSignal): Promise<void>; atStop(): Promise<void> };
  /** Cluster API's pre-drain hook on the node's Machine (core/capi): told of every Node change. */
  readonly hook?: {
    watch(signal: AbortSignal, held: () => Promise<boolean>): Promise<void>;
    onNode(node: NodeObject | undefined): void;
  };
}

const MAINTENANCE_KEY = 'nodemaintenance:';
const untaken = (nm: MaintenanceObject): boolean =>
  !nm.status?.phase && nm.metadata?.annotations?.[MAINTENANCE_NODE_ANNOTATION] === undefined;
const nmKey = (nm: MaintenanceObject): string => `${nm.apiVersion ?? ''}/${nm.metadata?.name ?? ''}`;

export class Agent {
  readonly #o: AgentOptions;
  readonly #queue: KeyedQueue;
  #node: NodeObject | undefined;
  readonly #maintenances = new Map<string, MaintenanceObject>();
  #nodeSynced = false;
  #maintenancesSynced: boolean;
  /** Aborted when another instance took the node's Lease: this agent stops acting at once. */
  readonly #lost = new AbortController();
  readonly #signal: AbortSignal;
  /** Resolves true once the node's Lease is ours (at once without one), false on shutdown first. */
  #held: Promise<boolean> = Promise.resolve(true);
  #slot: Slot | undefined;

  constructor(o: AgentOptions) {
    this.#o = o;
    this.#signal = AbortSignal.any([o.signal, this.#lost.signal]);
    this.#maintenancesSynced = o.mode === 'off';
    this.#queue = new KeyedQueue({
      signal: this.#signal,
      log: o.log,
      ...(o.backoff ? { backoff: o.backoff } : {}),
      handler: (key, signal) => this.#handle(key, signal),
      onBusy: (key) => this.#cancelIfStale(key),
    });
  }

  /** Runs until the signal aborts; then waits for the running reconcile to stop (its record stays). */
  async run(): Promise<void> {
    const { sources, mode } = this.#o;
    const signal = this.#signal;
    // the watches start at once (the agent is ready while a second instance waits: a DaemonSet
    // rollout with maxSurge needs the new pod ready); reconciles wait for the Lease
    if (this.#o.lease) this.#held = this.#hold(this.#o.lease);
    // ends with the agent's own signal too: an agent that lost its Lease returns (and its process
    // exits, so the kubelet starts it again) instead of idling with its checks alive
    const auth = this.#o.cloudAuth?.run(signal);
    const watches = [
      sources.watchNode({
        signal,
        onEvent: (type, node) => this.#onNode(type, node),
        onSynced: () => {
          this.#nodeSynced = true;
          this.#enqueueNode();
        },
      }),
    ];
    if (mode !== 'off') {
      watches.push(
        sources.watchMaintenances({
          signal,
          onEvent: (type, nm) => this.#onMaintenance(type, nm),
          onSynced: () => {
            this.#maintenancesSynced = true;
            this.#enqueueNode();
          },
        }),
      );
    }
    if (this.#o.gate) watches.push(this.#o.gate.watch(signal));
    if (this.#o.hook) watches.push(this.#o.hook.watch(signal, () => this.#held));
    await Promise.all(watches);
    await auth;
    await this.#queue.stopped();
    await this.#o.gate?.atStop();
    await this.#held;
    // a shutdown gives the Lease back: the next instance (a rollout's new pod) takes over at once
    if (this.#lost.signal.aborted) throw this.#lost.signal.reason;
    await this.#slot?.release();
    this.#o.log.info({ node: this.#o.nodeName }, 'agent stopped');
  }

  async #hold(lease: NonNullable<AgentOptions['lease']>): Promise<boolean> {
    const { log, nodeName } = this.#o;
    const slot = await lease.acquire(this.#signal, (holder) =>
      log.warn(
        { node: nodeName, holder, lease: lease.name },
        'another agent instance holds this node: waiting until it stops or its Lease expires',
      ),
    );
    if (!slot) return false;
    this.#slot = slot;
    log.info({ node: nodeName, lease: lease.name }, 'holding the node Lease');
    slot.lost.addEventListener(
      'abort',
      () => {
        log.error({ node: nodeName, lease: lease.name }, 'lost the node Lease: this agent stops acting');
        this.#lost.abort(
          new NodeHeldError(`node ${nodeName}: lost the Lease ${lease.name} to another agent instance`, ''),
        );
      },
      { once: true },
    );
    return true;
  }

  ready(): { ready: boolean; reasons: string[] } {
    const reasons: string[] = [];
    if (!this.#nodeSynced) reasons.push('node watch not synced');
    if (!this.#maintenancesSynced) reasons.push('NodeMaintenance watch not synced');
    reasons.push(...(this.#o.cloudAuth?.reasons() ?? []));
    return { ready: reasons.length === 0, reasons };
  }

  /** Resolves when no reconcile runs or waits (tests). */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /**
   * The reconciler re-reads the world, so a reconcile before every watch has listed once would be
   * repeated as soon as the last one does: the first runs when all have synced (one, not 2 or 3).
   */
  #enqueueNode(): void {
    if (this.#nodeSynced && this.#maintenancesSynced) this.#queue.enqueue(this.#o.nodeName);
  }

  #onNode(type: WatchEvent, node: NodeObject): void {
    const prev = this.#node;
    // kept as the latest always (the cancel check reads it); a status report reconciles nothing
    this.#node = type === 'DELETED' ? undefined : node;
    this.#o.hook?.onNode(this.#node);
    if (changesWhatIsRead(prev, this.#node)) this.#enqueueNode();
  }

  #onMaintenance(type: WatchEvent, nm: MaintenanceObject): void {
    const key = nmKey(nm);
    if (type === 'DELETED') this.#maintenances.delete(key);
    else this.#maintenances.set(key, nm);
    const me = this.#o.nodeName;
    if (nm.spec?.nodeName === me || nm.metadata?.annotations?.[MAINTENANCE_NODE_ANNOTATION] === me) {
      this.#enqueueNode();
    } else if (type !== 'DELETED' && this.#o.mode === 'own' && untaken(nm)) {
      // nobody acted on it yet: perhaps its node does not exist (then no agent owns it)
      this.#queue.enqueue(MAINTENANCE_KEY + key);
    }
  }

  async #handle(key: string, signal: AbortSignal) {
    if (!(await this.#held)) return undefined;
    // the pass reads the NodeMaintenances from this agent's watch (synced before any pass runs)
    if (!key.startsWith(MAINTENANCE_KEY))
      return this.#o.reconciler.reconcile(key, signal, { maintenances: [...this.#maintenances.values()] });
    const nm = this.#maintenances.get(key.slice(MAINTENANCE_KEY.length));
    if (nm) await this.#o.reconciler.checkMaintenance(nm);
    return undefined;
  }

  /** A change arrived while the node reconciles: if it makes the node InService, stop the evacuation now. */
  #cancelIfStale(key: string): void {
    const node = this.#node;
    if (key !== this.#o.nodeName || !node || !this.#o.reconciler.evacuating(key)) return;
    // a waiting node learns of drainer.dev/start-now (and a NodeMaintenance's) from here
    this.#o.reconciler.observe(key, node, [...this.#maintenances.values()]);
    const desired = desiredState({
      nodeName: key,
      node,
      maintenances: [...this.#maintenances.values()],
      record: parseRecord(node.metadata?.annotations?.[STATE_ANNOTATION]),
      mode: this.#o.mode,
      taints: this.#o.taints ?? [],
    });
    if (desired.state === 'InService') this.#o.reconciler.cancel(key, 'node back in service');
  }
}
