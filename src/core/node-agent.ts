// Assembles one node's agent on a Kubernetes cluster from built plugins: plugin host, Event
// recorder, the Cluster port, reconciler and watches. The daemon, run-once and the sandbox demo
// (one agent per node in one process) all build agents here.
import type { Config } from '../config/schema.ts';
import type { KubeClients } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from './agent.ts';
import { CloudAuth } from './cloud-auth.ts';
import { PluginHost } from './host.ts';
import { dryRunCluster } from './dry-run-cluster.ts';
import { kubeCluster } from './kube-cluster.ts';
import { kubeWatchSources, type KubeSourceOptions } from './kube-sources.ts';
import type { BackendPlugin } from './plugin.ts';
import { Reconciler } from './reconciler.ts';
import { FleetBudget } from './fleet/budget.ts';
import { kubeFleetApi } from './fleet/kube-port.ts';
import type { ReconcilerMetrics } from './run-context.ts';

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
  };
}

/** The fleet budget (Leases), unless the budget is 0, a dry run, or run-once --no-budget. */
export function createBudget(
  o: Pick<NodeAgentOptions, 'config' | 'k' | 'log' | 'signal' | 'watch'> & { noBudget?: boolean },
): FleetBudget | undefined {
  const fleet = o.config.fleet;
  if (fleet.maxConcurrentEvacuations === 0 || o.config.dryRun || o.noBudget) return undefined;
  return new FleetBudget({
    api: kubeFleetApi({
      k: o.k,
      namespace: fleet.namespace,
      daemonSet: fleet.daemonSet,
      log: o.log,
      ...(o.watch ? { watch: o.watch } : {}),
    }),
    budget: fleet.maxConcurrentEvacuations,
    leaseDuration: fleet.leaseDuration,
    // missed watch events heal within a resync; never slower than every few lease durations
    resyncMs: Math.min(o.config.resyncInterval, fleet.leaseDuration * 4) * 1000,
    log: o.log,
    signal: o.signal,
  });
}

/** The reconciler of one node on a Kubernetes cluster (the agent's, or run-once's). */
export function createReconciler(
  o: Pick<
    NodeAgentOptions,
    'nodeName' | 'config' | 'k' | 'plugins' | 'log' | 'metrics' | 'signal' | 'watch'
  > & {
    noBudget?: boolean;
  },
): Reconciler {
  const log = o.log.child({ node: o.nodeName });
  const host = new PluginHost({ plugins: o.plugins, log, ...(o.metrics ? { metrics: o.metrics } : {}) });
  const events = new EventRecorder({ k: o.k, log, host: o.nodeName });
  const metrics = o.metrics;
  const real = kubeCluster({
    k: o.k,
    events,
    drain: o.config.drain,
    log,
    ...(metrics ? { onEviction: (code: string) => metrics.evictions.inc({ code }) } : {}),
  });
  const cluster = o.config.dryRun ? dryRunCluster(real, log) : real;
  // its Lease watch opens at the first wait for a slot, and stays open for the agent's life
  const budget = createBudget({ ...o, log });
  return new Reconciler({
    cluster,
    ...(budget ? { budget } : {}),
    host,
    config: o.config,
    log,
    ...(metrics ? { metrics: reconcilerMetrics(metrics) } : {}),
  });
}

export function createNodeAgent(o: NodeAgentOptions): { agent: Agent; reconciler: Reconciler } {
  const log = o.log.child({ node: o.nodeName });
  const reconciler = createReconciler(o);
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
    log,
    signal: o.signal,
    ...(o.backoff ? { backoff: o.backoff } : {}),
  });
  return { agent, reconciler };
}
