// The fleet on a real kube-apiserver (issue 38): N Node objects (no kubelets), N real agents packed
// many to a child process (bench/lib/fleet-agents.ts), the sandbox's Nova. Measured from the API
// server's own /metrics: the idle fleet's requests, watches and bytes; a rolling maintenance with a
// budget (requests per queued node, hand-off latency, makespan / ideal); at the largest size, an
// API-server restart (time until every watch is back, the peak request rate). The bench builds
// nothing: it takes the kubeconfig of a control plane someone else runs (DRAINER_FLEET_KUBECONFIG).
import { mergeConfig } from '../../src/demo/agents.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import { startOpenStack } from '../../src/sandbox/openstack/index.ts';
import { drainerConfigFor, openstackOptions } from '../../src/sandbox/scenario-config.ts';
import { parseScenario } from '../../src/sandbox/scenario-load.ts';
import {
  byVerb,
  bytesOf,
  credentials,
  total,
  objectsOf,
  requestsOf,
  watchesOf,
  window,
} from '../lib/apiserver-metrics.ts';
import { cleanUp, createNodes, inBatches, lifecycleSettled, NS, setUp } from '../lib/fleet-cluster.ts';
import { quietAgents, requestsIn, startPack, sumStats, type Pack } from '../lib/fleet-pack.ts';
import { gatePodsRunning, OwnRequests, statusReports } from '../lib/kubelets.ts';
import { idealMakespan } from '../lib/stats.ts';
import { sleep, until } from '../lib/wait.ts';
import { restartApiServer, type RestartFigures } from './fleet-real-restart.ts';
import { FleetWatch } from './fleet-real-watch.ts';

export type { RestartFigures } from './fleet-real-restart.ts';

const log = createLogger({ level: 'silent' });
/** Progress on stderr (a size takes minutes). */
const say = (size: number, what: string) => process.stderr.write(`fleet-real: ${size} agents: ${what}\n`);

export interface FleetRealOptions {
  readonly kubeconfigYaml: string;
  readonly sizes: readonly number[];
  /** Agents per child process (the packing). */
  readonly perProcess: number;
  readonly budget: number;
  /** Real seconds of the idle window, and of the control plane's own baseline before it. */
  readonly idleSeconds: number;
  readonly baselineSeconds: number;
  /** Simulated seconds per real second, and simulated seconds of one live migration. */
  readonly scale: number;
  readonly migrationSeconds: number;
  /** Shell commands that stop and start the API server (the restart is skipped without them). */
  readonly restart?: { readonly stop: string; readonly start: string };
  /** Sizes measured before (DRAINER_FLEET_EARLIER), not measured again. */
  readonly earlier?: readonly SizeRun[];
}

export interface IdleFigures {
  readonly seconds: number;
  /** The fleet's requests per second: the API server's count less the control plane's own baseline. */
  readonly requestsPerSecond: number;
  /** What the agents counted themselves in the same window (a cross-check). */
  readonly agentRequestsPerSecond: number;
  readonly baselinePerSecond: number;
  /** The bench's own requests in the window (the kubelets' status reports), taken out of requestsPerSecond (absent: a run before they were). */
  readonly benchPerSecond?: number;
  readonly benchByVerb?: Record<string, number>;
  /** WATCH requests held, less the baseline's. */
  readonly watches: number;
  readonly bytesPerSecond: number;
  readonly watchEventsPerSecond: number;
  readonly byVerb: Record<string, number>;
}

export interface RollFigures {
  readonly nodes: number;
  readonly evacuated: number;
  readonly makespanS: number;
  readonly idealS: number;
  readonly queuedNodeMinutes: number;
  readonly queuedRequests: number;
  readonly perQueuedNodeMinute: number;
  readonly perRealMinute: number;
  readonly perQueuedNode: number;
  readonly handoffs: readonly number[];
  readonly requestsPerSecond: number;
  readonly maxEvacuating: number;
}

export interface SizeRun {
  readonly agents: number;
  readonly processes: number;
  readonly idle: IdleFigures;
  readonly roll: RollFigures;
  readonly restart?: RestartFigures;
  /** Why the restart was not measured (its commands failed). */
  readonly restartError?: string;
  readonly objects: Record<string, number>;
  /** Per agent: RSS (MB, the processes' RSS over their agents) and CPU (ms per second). */
  readonly rssMbPerAgent: number;
  readonly rssMbPerProcess: number;
  readonly cpuIdleMsPerSecond: number;
  readonly cpuRollMsPerSecond: number;
  readonly startSeconds: number;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const nodeName = (size: number, i: number) => `fleet-${size}-${String(i + 1).padStart(4, '0')}`;

// ---- one size ----------------------------------------------------------------------------------

async function runSize(o: FleetRealOptions, size: number, k: KubeClients): Promise<SizeRun> {
  const c = credentials(o.kubeconfigYaml);
  const names = Array.from({ length: size }, (_, i) => nodeName(size, i));
  const stop = new AbortController();
  const scenario = parseScenario({
    name: `fleet-real-${size}`,
    clock: { scale: o.scale },
    nodes: names.map((name) => ({ name })),
    openstack: {
      migrationSeconds: o.migrationSeconds,
      hosts: [
        // the operator disabled the rack's compute services first: the servers go to the spares
        ...names.map((name) => ({
          name,
          maxConcurrentLiveMigrations: 2,
          disabledReason: 'rack maintenance',
        })),
        ...Array.from({ length: 5 }, (_, i) => ({
          name: `spare-${i + 1}`,
          ramMb: 40_000_000,
          vcpus: 40_000,
          diskGb: 4_000_000,
          maxConcurrentLiveMigrations: 1000,
        })),
      ],
      servers: names.map((host, i) => ({ name: `vm-${i + 1}`, project: 'alpha', host })),
    },
    kubevirt: { installed: false },
  });
  const clock = new ScaledClock(o.scale);
  const openstack = await startOpenStack(openstackOptions(scenario, clock));
  const config = mergeConfig(drainerConfigFor(scenario, openstack, o.scale), {
    // the daemon's own periodic re-check, not the sandbox's fast one
    resyncInterval: 300,
    server: { enabled: false },
    nova: { pollInterval: 0.2, retryBackoff: 0.5, maxConcurrentMigrations: 2 },
    drain: { evictionRetryInterval: 0.5 },
    fleet: { maxConcurrentEvacuations: o.budget, namespace: NS },
  });
  let pack: Pack | undefined;
  try {
    await createNodes(k, names);
    say(size, 'Nodes created');
    await lifecycleSettled(k, names);
    say(size, 'Nodes unreachable (no kubelet): the control plane settled');
    // what kubelets would do, from now on (in the baseline too): the bench's own requests, taken out
    const own = new OwnRequests(k);
    gatePodsRunning({ k, own, namespace: NS, log }, stop.signal);
    statusReports(own, names, stop.signal);
    // the bench's own watch of the Nodes and slot Leases (open before the baseline: in it)
    const watch = new FleetWatch(names);
    watch.open(k, stop.signal, log);
    await sleep(2000);

    // the control plane alone: its own requests (controllers, the API server's own Leases, this bench)
    const b0 = await window(c);
    await sleep(o.baselineSeconds * 1000);
    const b1 = await window(c);
    const baselinePerSecond =
      (requestsOf(b1.samples) - requestsOf(b0.samples) - own.count(b0.at, b1.at)) / ((b1.at - b0.at) / 1000);
    const baselineWatches = watchesOf(b1.samples);
    const baselineBytes = (bytesOf(b1.samples) - bytesOf(b0.samples)) / ((b1.at - b0.at) / 1000);

    say(size, `baseline ${round1(baselinePerSecond)} requests/s`);
    const started = Date.now();
    pack = await startPack(names, o.perProcess, config, o.kubeconfigYaml);
    const p = pack;
    await until('every agent ready', async () => sumStats(await p.stats()).ready === size, 600_000, 1000);
    const startSeconds = (Date.now() - started) / 1000;
    say(size, `every agent ready in ${round1(startSeconds)} s`);
    // idle: the agents' start-up requests are over (their gates hold): at most a renewal each in 10 s
    await quietAgents(pack, 10_000, 600_000);

    say(size, 'agents idle: measuring');
    const s0 = sumStats(await pack.stats());
    const i0 = await window(c);
    await sleep(o.idleSeconds * 1000);
    const i1 = await window(c);
    const s1 = sumStats(await pack.stats());
    const idleS = (i1.at - i0.at) / 1000;
    const benchIdle = own.count(i0.at, i1.at);
    const idle: IdleFigures = {
      seconds: idleS,
      requestsPerSecond: Math.max(
        0,
        (requestsOf(i1.samples) - requestsOf(i0.samples) - benchIdle) / idleS - baselinePerSecond,
      ),
      agentRequestsPerSecond: requestsIn(s1.requests, i0.at, i1.at) / idleS,
      baselinePerSecond,
      benchPerSecond: benchIdle / idleS,
      benchByVerb: own.byKey(i0.at, i1.at),
      watches: watchesOf(i1.samples) - baselineWatches,
      bytesPerSecond: Math.max(0, (bytesOf(i1.samples) - bytesOf(i0.samples)) / idleS - baselineBytes),
      watchEventsPerSecond:
        (total(i1.samples, 'apiserver_watch_events_total') -
          total(i0.samples, 'apiserver_watch_events_total')) /
        idleS,
      byVerb: byVerb(i0.samples, i1.samples, own.byKey(i0.at, i1.at)),
    };
    const objects = objectsOf(i1.samples);
    const cpuIdle = ((s1.cpu - s0.cpu) / idleS / size) * 1000;

    say(size, `idle ${round1(idle.requestsPerSecond)} requests/s, ${idle.watches} watches; rolling`);
    // the roll: every node cordoned (kubectl cordon -l rack=…), the budget lets `budget` go at once
    const r0 = await window(c);
    const rollStart = Date.now();
    await inBatches(names, 50, (n) =>
      own.request('PATCH nodes', {
        method: 'PATCH',
        path: `/api/v1/nodes/${n}`,
        contentType: 'application/merge-patch+json',
        body: { spec: { unschedulable: true } },
      }),
    );
    await until('every node evacuated', () => watch.settled(), Math.max(300_000, size * 3000), 500);
    const rollEnd = Date.now();
    say(size, 'every node evacuated');
    const r1 = await window(c);
    const s2 = sumStats(await pack.stats());
    const rollS = (rollEnd - rollStart) / 1000;
    const queued = watch.queued(s2.requests);
    const queuedMs = queued.ms;
    const roll: RollFigures = {
      nodes: size,
      evacuated: watch.evacuated(),
      makespanS: rollS,
      idealS: idealMakespan(watch.took(), o.budget) / 1000,
      queuedNodeMinutes: queuedMs / 60_000,
      queuedRequests: queued.requests,
      // per simulated minute, as the sandbox's fleet scenario counts: the waits last as long as the
      // evacuations ahead, which run on the sandbox's clock (×scale); real minutes in perRealMinute
      perQueuedNodeMinute: queuedMs > 0 ? queued.requests / ((queuedMs / 60_000) * o.scale) : 0,
      perRealMinute: queuedMs > 0 ? queued.requests / (queuedMs / 60_000) : 0,
      perQueuedNode: queued.nodes ? queued.requests / queued.nodes : 0,
      handoffs: watch.handoffs(o.budget),
      requestsPerSecond:
        (requestsOf(r1.samples) - requestsOf(r0.samples) - own.count(r0.at, r1.at)) / rollS -
        baselinePerSecond,
      maxEvacuating: watch.maxEvacuating,
    };
    const cpuRoll = ((s2.cpu - s1.cpu) / rollS / size) * 1000;

    let restart: RestartFigures | undefined;
    let restartError: string | undefined;
    // a restart that fails costs its own figures, not the idle and roll ones measured before it
    if (o.restart && size === Math.max(...o.sizes))
      restart = await restartApiServer(o.restart, c, {
        agents: size,
        idlePerSecond: idle.requestsPerSecond,
        baselinePerSecond,
        pack,
      }).catch((err: unknown) => {
        restartError = err instanceof Error ? err.message : String(err);
        return undefined;
      });

    const last = sumStats(await pack.stats());
    return {
      agents: size,
      processes: pack.children.length,
      idle,
      roll,
      ...(restart ? { restart } : {}),
      ...(restartError !== undefined ? { restartError } : {}),
      objects,
      rssMbPerAgent: last.rss / 1e6 / size,
      rssMbPerProcess: last.rss / 1e6 / pack.children.length,
      cpuIdleMsPerSecond: cpuIdle,
      cpuRollMsPerSecond: cpuRoll,
      startSeconds,
    };
  } finally {
    await pack?.stop();
    stop.abort();
    await openstack.close();
    await cleanUp(k, names).catch((err: unknown) =>
      process.stderr.write(`fleet-real: clean-up after ${size} agents failed: ${String(err)}\n`),
    );
  }
}

// ---- the scenario ------------------------------------------------------------------------------

/** The line each measured size is printed as (stderr): an earlier invocation's can be merged in. */
const RUN_LINE = /^fleet-real: (\d+) agents: (\{.*\})$/;

/** Sizes measured by an earlier invocation (its stderr), with the same settings. */
export function earlierRuns(text: string): SizeRun[] {
  return text
    .split('\n')
    .map((l) => RUN_LINE.exec(l)?.[2])
    .filter((j): j is string => j !== undefined)
    .map((j) => JSON.parse(j) as SizeRun);
}

export interface FailedSize {
  readonly agents: number;
  readonly why: string;
}

export async function fleetReal(
  o: FleetRealOptions,
  earlier: readonly SizeRun[] = [],
  failed: FailedSize[] = [],
): Promise<SizeRun[]> {
  const k = createKubeClients({ kubeconfigYaml: o.kubeconfigYaml });
  await setUp(k);
  const runs: SizeRun[] = earlier.filter((r) => !o.sizes.includes(r.agents));
  for (const size of o.sizes) {
    // a size that cannot finish is named with its cause; the sizes that did are still written
    const r = await runSize(o, size, k).catch((err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      process.stderr.write(`fleet-real: ${size} agents: not measured: ${why}\n`);
      failed.push({ agents: size, why });
      return undefined;
    });
    if (!r) continue;
    process.stderr.write(`fleet-real: ${size} agents: ${JSON.stringify(r)}\n`);
    runs.push(r);
  }
  return runs.sort((a, b) => a.agents - b.agents);
}
