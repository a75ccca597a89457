// Assembles one node's agent on a Kubernetes cluster from built plugins: plugin host, Event
// recorder, the Cluster port, reconciler and watches. The daemon, run-once and the sandbox demo
// (one agent per node in one process) all build agents here.
import { hostname } from 'node:os';
import type { Config } from '../../config/schema.ts';
import type { KubeClients } from '../../kube/client.ts';
import { EventRecorder } from '../../kube/events.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from './agent.ts';
import { CloudAuth } from '../cluster/cloud-auth.ts';
import { PluginHost } from '../backends/host.ts';
import { dryRunCluster } from '../cluster/dry-run-cluster.ts';
import { kubeCluster } from '../cluster/kube-cluster.ts';
import { kubeWatchSources, type KubeSourceOptions } from '../cluster/kube-sources.ts';
import type { BackendPlugin } from '../backends/plugin.ts';
import { Reconciler } from './reconciler.ts';
import { endEvacuationForGood, LAST_STOP_FINISH_MS } from './left-for-good.ts';
import { FleetBudget } from '../fleet/budget.ts';
import { kubeFleetApi } from '../fleet/kube-port.ts';
import { createStartGate } from '../fleet/gate-setup.ts';
import { LeaseCache } from '../fleet/lease-cache.ts';
import type { FleetApi } from '../fleet/types.ts';
import { kubeHolderPod, NODE_LEASE_COMPONENT, NodeLease } from './node-lease.ts';
import type { ReconcilerMetrics } from './run-context.ts';
import { DrainGate, type DrainGateOptions, type GateSeen } from '../gate/gate.ts';
import type { GateApi } from '../gate/api.ts';
import { gateKeeper } from '../gate/keeper.ts';
import { remainingOn } from '../gate/remaining.ts';
import { kubeGateApi } from '../gate/kube-port.ts';
import { gateName } from '../../kube/gate.ts';
import { fleetTools } from '../capi/fleet-tools.ts';

export interface NodeAgentOptions {
  readonly nodeName: string;
  readonly config: Config;
  readonly k: KubeClients;
  readonly plugins: readonly BackendPlugin[];
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly metrics?: Metrics;
  /** Watch tuning (tests and the sandbox use short timeouts and backoffs). */
  readonly watch?: Pick<KubeSourceOptions, 'timeoutSeconds' | 'backoff' | 'recheckMs'>;
  /** Queue backoff after a failed reconcile. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** The clock of windows, freezes and records (tests inject the sandbox's). */
  readonly now?: () => Date;
  /** Longest sleep of a node waiting at the start gate, ms (tests shorten it). */
  readonly gateSleepMs?: number;
}

export function reconcilerMetrics(m: Metrics): ReconcilerMetrics {
  return {
    evacuationFinished(result, seconds) {
      m.evacuations.inc({ result });
      m.evacuationDuration.observe(seconds);
    },
    phase(phase) {
      m.setPhase(phase ?? 'InService');
    },
    queueFinished(seconds) {
      m.evacuationQueue.observe(seconds);
    },
    fleetSlots(taken, total) {
      m.fleetSlots.set({ state: 'taken' }, taken);
      m.fleetSlots.set({ state: 'free' }, Math.max(0, total - taken));
    },
    gate(s, waiting) {
      m.fleetWindowOpen.set(s.windowOpen ? 1 : 0);
      m.fleetFreezeActive.set(s.freezes.length);
      for (const [b, text] of Object.entries(s.blockers))
        if (text !== undefined) m.fleetBlocker.set({ blocker: b }, text ? 1 : 0);
      for (const kind of WAIT_KINDS) m.fleetWaiting.set({ kind }, kind === waiting ? 1 : 0);
    },
    recordUnreadable(unreadable) {
      m.recordUnreadable.set(unreadable ? 1 : 0);
    },
  };
}

const WAIT_KINDS = ['window', 'freeze', 'prometheus', 'pods'] as const;

type FleetParts = Pick<NodeAgentOptions, 'config' | 'k' | 'log' | 'signal' | 'watch'>;

/** The fleet's Kubernetes port and Lease watch, shared by the budget and the start gate. */
export function fleetParts(o: FleetParts): { api: FleetApi; cache: LeaseCache } {
  const fleet = o.config.fleet;
  const api = kubeFleetApi({
    k: o.k,
    namespace: fleet.namespace,
    daemonSet: fleet.daemonSet,
    log: o.log,
    ...(o.watch ? { watch: o.watch } : {}),
  });
  return { api, cache: new LeaseCache(api, o.signal) };
}

/** The fleet budget (Leases), unless the budget is 0, a dry run, or run-once --no-budget. */
export function createBudget(
  o: FleetParts & { noBudget?: boolean; parts?: { api: FleetApi; cache: LeaseCache } },
): FleetBudget | undefined {
  const fleet = o.config.fleet;
  if (fleet.maxConcurrentEvacuations === 0 || o.config.dryRun || o.noBudget) return undefined;
  const { api, cache } = o.parts ?? fleetParts(o);
  return new FleetBudget({
    api,
    cache,
    budget: fleet.maxConcurrentEvacuations,
    leaseDuration: fleet.leaseDuration,
    agentLeaseDuration: fleet.agentLeaseDuration,
    instance: o.config.instance ?? defaultInstance(),
    // missed watch events heal within a resync; never slower than every few lease durations
    resyncMs: Math.min(o.config.resyncInterval, fleet.leaseDuration * 4) * 1000,
    log: o.log,
    signal: o.signal,
  });
}

/**
 * The node's drain gate (drainGate.enabled; not in a dry run) in drainer's namespace. Its PDBs are
 * owned by the agent DaemonSet (fleet.daemonSet), so uninstalling drainer removes them.
 */
export function createDrainGate(
  o: Pick<NodeAgentOptions, 'config' | 'k' | 'log' | 'metrics'> & {
    readonly event?: DrainGateOptions['event'];
    readonly api?: GateApi;
  },
): DrainGate | undefined {
  const { drainGate, fleet, dryRun } = o.config;
  if (!drainGate.enabled || dryRun) return undefined;
  const metrics = o.metrics;
  return new DrainGate({
    api: o.api ?? gateApi(o),
    podOf: (node) => ({ namespace: fleet.namespace, name: gateName(node) }),
    log: o.log,
    ...(o.event ? { event: o.event } : {}),
    ...(metrics
      ? {
          onSeen: (_node: string, seen: GateSeen, want: boolean) => {
            metrics.drainGateHeld.set(seen.held ? 1 : 0);
            metrics.drainGateNotHeld.set(want && !seen.held ? 1 : 0);
          },
        }
      : {}),
  });
}

const gateApi = (o: Pick<NodeAgentOptions, 'config' | 'k' | 'log'>): GateApi =>
  kubeGateApi({
    k: o.k,
    namespace: o.config.fleet.namespace,
    daemonSet: o.config.fleet.daemonSet,
    image: o.config.drainGate.image,
    log: o.log,
  });

/**
 * drainGate.enabled false: a gate pod left from when it was on would hold every drain of the node
 * for good. The agent deletes it once at start (one request; its PDB then guards nothing).
 */
function dropDisabledGate(o: NodeAgentOptions, log: Logger): void {
  const { drainGate, fleet, dryRun } = o.config;
  if (drainGate.enabled || dryRun) return;
  const api = kubeGateApi({
    k: o.k,
    namespace: fleet.namespace,
    daemonSet: fleet.daemonSet,
    image: drainGate.image,
    log,
  });
  void api.release(o.nodeName).then(
    (gone) => gone && log.info({ node: o.nodeName }, 'drainGate.enabled is false: removed the gate pod'),
    (err: unknown) => log.warn({ err }, 'drainGate.enabled is false: could not remove the gate pod'),
  );
}

/** The reconciler of one node on a Kubernetes cluster (the agent's, or run-once's). */
export function createReconciler(
  o: Pick<
    NodeAgentOptions,
    'nodeName' | 'config' | 'k' | 'plugins' | 'log' | 'metrics' | 'signal' | 'watch' | 'now' | 'gateSleepMs'
  > & {
    noBudget?: boolean;
    /** run-once: no start gate */
    once?: boolean;
    /** The gate's API port, shared with the agent's gate keeper (one port reads the DaemonSet once). */
    gateApi?: GateApi;
  },
): Reconciler {
  const log = o.log.child({ node: o.nodeName });
  const host = new PluginHost({ plugins: o.plugins, log, ...(o.metrics ? { metrics: o.metrics } : {}) });
  const events = new EventRecorder({ k: o.k, log, host: o.nodeName });
  const metrics = o.metrics;
  // the memory alert's time comes from the config, so the PrometheusRule needs no edit to change it
  metrics?.evacuationMemoryAlertAfter.set(o.config.evacuation.memoryAlertAfter);
  const real = kubeCluster({
    k: o.k,
    events,
    drain: o.config.drain,
    log,
    ...(metrics ? { onEviction: (code: string) => metrics.evictions.inc({ code }) } : {}),
  });
  const cluster = o.config.dryRun ? dryRunCluster(real, log) : real;
  // its Lease watch opens at the first wait for a slot, and stays open for the agent's life
  const parts = fleetParts({ ...o, log });
  const budget = createBudget({ ...o, log, parts });
  const gate = createDrainGate({
    ...o,
    log,
    ...(o.gateApi ? { api: o.gateApi } : {}),
    event: (node, type, reason, message) =>
      void events
        .record({ apiVersion: 'v1', kind: 'Node', name: node }, type, reason, message)
        .catch((err: unknown) => log.warn({ err, reason }, 'could not record Event')),
  });
  const now = o.now ?? (() => new Date());
  // run-once (--no-budget or not) and dry runs start at once: the operator asked for it now
  const startGate =
    o.config.dryRun || o.noBudget || o.once
      ? undefined
      : createStartGate({
          config: o.config,
          k: o.k,
          nodeName: o.nodeName,
          ...parts,
          log,
          now,
          ...(o.gateSleepMs ? { maxSleepMs: o.gateSleepMs } : {}),
          ...(metrics ? { onQuery: () => metrics.prometheusQueries.inc() } : {}),
        });
  const rm = metrics ? reconcilerMetrics(metrics) : undefined;
  // the gate's gauges from the start (no windows: open), not only once a node waits
  rm?.gate?.(startGate?.state() ?? { windowOpen: true, freezes: [], blockers: {} }, undefined);
  return new Reconciler({
    cluster,
    ...(budget ? { budget } : {}),
    ...(gate ? { gate } : {}),
    ...(startGate ? { startGate } : {}),
    ...(o.now ? { now: o.now } : {}),
    host,
    config: o.config,
    log,
    ...(rm ? { metrics: rm } : {}),
  });
}

/** This process as a holder of Leases, when the downward API does not name the pod. */
export const defaultInstance = (): string => `${hostname()}/${process.pid}`;

/** The node's agent Lease (none in a dry run, which changes nothing). */
export function createNodeLease(
  o: Pick<NodeAgentOptions, 'config' | 'k' | 'log' | 'nodeName'> & { instance?: string },
): NodeLease | undefined {
  if (o.config.dryRun) return undefined;
  const fleet = o.config.fleet;
  return new NodeLease({
    api: kubeFleetApi({
      k: o.k,
      namespace: fleet.namespace,
      daemonSet: fleet.daemonSet,
      log: o.log,
      component: NODE_LEASE_COMPONENT,
    }),
    node: o.nodeName,
    instance: o.instance ?? o.config.instance ?? defaultInstance(),
    durationSeconds: fleet.agentLeaseDuration,
    log: o.log,
    // the agent pods run in the fleet's namespace: a holder pod gone is not waited for
    holderPod: kubeHolderPod(o.k, fleet.namespace),
  });
}

export function createNodeAgent(o: NodeAgentOptions): { agent: Agent; reconciler: Reconciler } {
  const log = o.log.child({ node: o.nodeName });
  const { drainGate, dryRun } = o.config;
  const shared = drainGate.enabled && !dryRun ? gateApi({ ...o, log }) : undefined;
  const reconciler = createReconciler({ ...o, ...(shared ? { gateApi: shared } : {}) });
  const lease = createNodeLease({ ...o, log });
  dropDisabledGate(o, log);
  const gate = reconciler.gate;
  const api = gate ? shared : undefined;
  // the stop's own looks at the plugins (what is left, what only drainer would finish): no metrics
  const atStop = new PluginHost({ plugins: o.plugins, log });
  const keeper =
    gate && api
      ? gateKeeper({
          k: o.k,
          namespace: o.config.fleet.namespace,
          nodeName: o.nodeName,
          instance: o.config.instance ?? defaultInstance(),
          gate,
          uninstalled: () => api.uninstalled?.() ?? Promise.resolve(false),
          successorExpected: () => api.successorExpected?.(o.nodeName) ?? Promise.resolve(true),
          drop: () => api.drop?.(o.nodeName) ?? Promise.resolve(),
          // asked at the stop, when the agent's own signal has aborted: a bounded look of its own
          leftOnNode: () => remainingOn(atStop, o.nodeName, AbortSignal.timeout(10_000)),
          noSuccessor: async () => {
            const ended = await endEvacuationForGood({
              cluster: reconciler.cluster,
              nodeName: o.nodeName,
              log,
              now: o.now ?? (() => new Date()),
            });
            // what only drainer would finish of the evacuation it started (Nova: its resizes' confirm)
            if (ended?.phase === 'Evacuating')
              await atStop.leftForGood(
                { name: o.nodeName },
                { get: (plugin) => ended.plugins[plugin] },
                AbortSignal.timeout(LAST_STOP_FINISH_MS),
              );
          },
          log,
          backoff: o.watch?.backoff,
        })
      : undefined;
  const metrics = o.metrics;
  const cloudAuth = new CloudAuth({
    plugins: o.plugins,
    log,
    signal: o.signal,
    intervalMs: o.config.resyncInterval * 1000,
    sleep: (ms, signal) => delay(ms, undefined, { signal }),
    ...(metrics ? { onVerdict: (plugin, ok) => metrics.cloudAuthOk.set({ plugin }, ok ? 1 : 0) } : {}),
  });
  const agent = new Agent({
    cloudAuth,
    nodeName: o.nodeName,
    reconciler,
    sources: kubeWatchSources({ k: o.k, nodeName: o.nodeName, log, ...o.watch }),
    mode: o.config.nodeMaintenance.mode,
    taints: o.config.triggers.taints,
    log,
    signal: o.signal,
    ...(o.backoff ? { backoff: o.backoff } : {}),
    ...(lease ? { lease } : {}),
    ...(keeper ? { gate: keeper } : {}),
    ...(o.config.dryRun ? {} : { hook: fleetTools(o, log) }),
  });
  return { agent, reconciler };
}
