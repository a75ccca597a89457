// The fleet on a real kube-apiserver (issue 38): N Node objects (no kubelets), N real agents packed
// many to a child process (bench/lib/fleet-agents.ts), the sandbox's Nova. Measured from the API
// server's own /metrics: the idle fleet's requests, watches and bytes; a rolling maintenance with a
// budget (requests per queued node, hand-off latency, makespan / ideal); at the largest size, an
// API-server restart (time until every watch is back, the peak request rate). The bench builds
// nothing: it takes the kubeconfig of a control plane someone else runs (DRAINER_FLEET_KUBECONFIG).
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { mergeConfig } from '../../src/demo/agents.ts';
import { isConflictError, isNotFoundError } from '../../src/errors.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import type { KubeNode, KubeObject } from '../../src/kube/types.ts';
import { runWatch } from '../../src/kube/watch.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import { startOpenStack } from '../../src/sandbox/openstack/index.ts';
import { drainerConfigFor, openstackOptions } from '../../src/sandbox/scenario-config.ts';
import { parseScenario } from '../../src/sandbox/scenario-load.ts';
import { credentials, scrapeMetrics, total, type Sample } from '../lib/apiserver-metrics.ts';
import type { AgentsStats } from '../lib/fleet-agents.ts';
import { gatePodsRunning, OwnRequests, statusReports } from '../lib/kubelets.ts';
import { idealMakespan } from '../lib/stats.ts';
import { sleep, until } from '../lib/wait.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const NS = 'drainer';
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

export interface RestartFigures {
  readonly downS: number;
  /** From the API server answering again until its WATCH gauge is back at the level before. */
  readonly rewatchS: number | undefined;
  readonly watchesBefore: number;
  readonly watchesAfter: number;
  /** Requests started per second (answered requests plus newly held watches), the largest 1 s bucket. */
  readonly peakPerSecond: number;
  readonly idlePerSecond: number;
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

// ---- the agents' processes -------------------------------------------------------------------

interface Pack {
  readonly children: ChildProcess[];
  stats(): Promise<AgentsStats[]>;
  stop(): Promise<void>;
}

function ask<T>(c: ChildProcess, msg: object, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: { type?: string }) => {
      if (m.type !== type) return;
      c.off('message', on);
      c.off('exit', exited);
      resolve(m as T);
    };
    const exited = (code: number | null) => {
      c.off('message', on);
      reject(new Error(`agent process exited (${code}) before answering ${type}`));
    };
    c.on('message', on);
    c.once('exit', exited);
    c.send(msg);
  });
}

async function startPack(
  nodes: readonly string[],
  perProcess: number,
  config: Record<string, unknown>,
  kubeconfigYaml: string,
): Promise<Pack> {
  const children: ChildProcess[] = [];
  for (let i = 0; i < nodes.length; i += perProcess) {
    const c = fork(path.join(REPO, 'bench/lib/fleet-agents.ts'), [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      // one process holds many agents' sockets and heaps
      execArgv: ['--max-old-space-size=4096'],
    });
    children.push(c);
    await ask(c, { type: 'start', nodes: nodes.slice(i, i + perProcess), config, kubeconfigYaml }, 'started');
  }
  return {
    children,
    stats: () => Promise.all(children.map((c) => ask<AgentsStats>(c, { type: 'stats' }, 'stats'))),
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null) return resolve();
              const t = setTimeout(() => c.kill('SIGKILL'), 30_000);
              c.once('exit', () => {
                clearTimeout(t);
                resolve();
              });
              c.send({ type: 'stop' });
            }),
        ),
      );
    },
  };
}

const sumStats = (s: readonly AgentsStats[]) => ({
  ready: s.reduce((a, x) => a + x.ready, 0),
  rss: s.reduce((a, x) => a + x.rssBytes, 0),
  cpu: s.reduce((a, x) => a + x.cpuSeconds, 0),
  requests: Object.assign({}, ...s.map((x) => x.requests)) as Record<string, number[]>,
});

const requestsIn = (r: Record<string, number[]>, from: number, to: number) =>
  Object.values(r).reduce((a, ts) => a + ts.filter((t) => t >= from && t < to).length, 0);

// ---- the cluster -----------------------------------------------------------------------------

async function ensure(k: KubeClients, p: string, body: KubeObject): Promise<void> {
  try {
    await k.request({ method: 'POST', path: p, body });
  } catch (err) {
    if (!isConflictError(err)) throw err; // 409 AlreadyExists
  }
}

async function setUp(k: KubeClients): Promise<void> {
  await ensure(k, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  // the agents' DaemonSet, as installed, selecting no node (no kubelet runs its pods): the gates'
  // PDBs are owned by it, and a percentage budget would count it
  await ensure(k, `/apis/apps/v1/namespaces/${NS}/daemonsets`, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'drainer', namespace: NS },
    spec: {
      selector: { matchLabels: { app: 'drainer' } },
      template: {
        metadata: { labels: { app: 'drainer' } },
        spec: {
          nodeSelector: { 'drainer.dev/fleet-bench': 'no-such-node' },
          containers: [{ name: 'drainer', image: 'ghcr.io/drainer-dev/drainer:0.1.0' }],
        },
      },
    },
  });
  const crd = readFileSync(
    path.join(REPO, 'daemonset/components/nodemaintenance-crd/crd-nodemaintenance.yaml'),
  );
  const yaml = (await import('js-yaml')).default;
  await ensure(
    k,
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    yaml.load(String(crd)) as KubeObject,
  );
}

/** Runs `fn` over items, `width` at a time. */
async function inBatches<T>(
  items: readonly T[],
  width: number,
  fn: (t: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

async function createNodes(k: KubeClients, names: readonly string[]): Promise<void> {
  const now = new Date().toISOString();
  await inBatches(names, 25, (name) =>
    ensure(k, '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'openstack-compute-node': 'enabled', 'kubernetes.io/hostname': name } },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    }),
  );
}

/** Deletes what a size left: its Nodes, and every Lease, gate Pod and PDB in drainer's namespace. */
async function cleanUp(k: KubeClients, names: readonly string[]): Promise<void> {
  const gone = (err: unknown) => {
    if (!isNotFoundError(err)) throw err;
  };
  await inBatches(names, 25, (n) => k.request({ method: 'DELETE', path: `/api/v1/nodes/${n}` }).catch(gone));
  for (const p of [
    `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
    `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`,
  ])
    await k.request({ method: 'DELETE', path: p });
  // the gate pods carry a finalizer: off first, then they go
  const pods = await k.request<{ items: KubeObject[] }>({ path: `/api/v1/namespaces/${NS}/pods` });
  await inBatches(pods.items, 25, (p) =>
    k
      .request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${NS}/pods/${p.metadata.name}`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { finalizers: null } },
      })
      .catch(gone),
  );
  await k.request({ method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods` });
}

/**
 * The node lifecycle controller marks kubelet-less Nodes' Ready condition Unknown ~40 s after they
 * appear (one status write each; its NoExecute taints then trickle in at its eviction rate limit,
 * 0.1 nodes per second): wait for the status writes, so they are not taken for the agents'.
 */
async function lifecycleSettled(k: KubeClients, names: readonly string[]): Promise<void> {
  const want = new Set(names);
  const unknown = (n: KubeNode) =>
    (n.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some(
      (c) => c.type === 'Ready' && c.status === 'Unknown',
    );
  // about 2.5 Nodes a second here (its client's QPS limit): 7 minutes for 1,000
  let marked = 0;
  await until(
    'the node lifecycle controller to mark the new Nodes unknown',
    async () => {
      // a loaded API server may not answer one poll: the next one asks again
      const list = await k
        .request<{ items: KubeNode[] }>({ path: '/api/v1/nodes' })
        .catch(() => ({ items: [] }));
      marked = Math.max(
        marked,
        list.items.filter((n) => want.has(n.metadata.name ?? '') && unknown(n)).length,
      );
      return marked === want.size;
    },
    900_000,
    5000,
  ).catch(() =>
    process.stderr.write(`fleet-real: only ${marked} of ${want.size} Nodes marked unknown: going on\n`),
  );
  await sleep(10_000); // and its NoSchedule taint pass
}

// ---- the API server's figures ------------------------------------------------------------------

const LONG = new Set(['WATCH', 'CONNECT']);
const requestsOf = (s: readonly Sample[]) =>
  total(s, 'apiserver_request_total', (l) => !LONG.has(l.verb ?? ''));
const watchesOf = (s: readonly Sample[]) =>
  total(s, 'apiserver_longrunning_requests', (l) => l.verb === 'WATCH');
const bytesOf = (s: readonly Sample[]) =>
  total(s, 'apiserver_response_sizes_sum') + total(s, 'apiserver_watch_events_sizes_sum');
/** Requests in the window by "<verb> <resource>[/<subresource>]", less `own` (the bench's). */
const byVerb = (a: readonly Sample[], b: readonly Sample[], own: Record<string, number>) => {
  const out: Record<string, number> = {};
  for (const s of b)
    if (s.name === 'apiserver_request_total' && !LONG.has(s.labels.verb ?? '')) {
      const key = `${s.labels.verb} ${s.labels.resource}${s.labels.subresource ? `/${s.labels.subresource}` : ''}`;
      out[key] = (out[key] ?? 0) + s.value;
    }
  for (const s of a)
    if (s.name === 'apiserver_request_total' && !LONG.has(s.labels.verb ?? '')) {
      const key = `${s.labels.verb} ${s.labels.resource}${s.labels.subresource ? `/${s.labels.subresource}` : ''}`;
      out[key] = (out[key] ?? 0) - s.value;
    }
  for (const [key, v] of Object.entries(own)) out[key] = (out[key] ?? 0) - v;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v > 0));
};
const objectsOf = (s: readonly Sample[]) =>
  Object.fromEntries(
    s
      .filter((x) => x.name === 'apiserver_storage_objects' && x.value > 0)
      .map((x) => [x.labels.resource ?? '', x.value]),
  );

interface Window {
  readonly at: number;
  readonly samples: Sample[];
}

async function window(c: ReturnType<typeof credentials>): Promise<Window> {
  return { at: Date.now(), samples: await scrapeMetrics(c) };
}

// ---- one size ----------------------------------------------------------------------------------

interface Phase {
  phase: string;
  queuedAt?: number;
  queued: [number, number][];
  evacuating?: number;
  took?: number;
}

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
    const phases = new Map<string, Phase>(names.map((n) => [n, { phase: 'InService', queued: [] }]));
    const freed: number[] = [];
    const began: number[] = [];
    let evacuating = 0;
    let maxEvacuating = 0;
    void runWatch<KubeNode>({
      k,
      path: '/api/v1/nodes',
      signal: stop.signal,
      log,
      onEvent: (_t, n) => {
        const p = phases.get(n.metadata.name ?? '');
        if (!p) return;
        const next = parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.phase ?? 'InService';
        if (next === p.phase) return;
        const now = Date.now();
        if (p.phase === 'Queued' && p.queuedAt !== undefined) p.queued.push([p.queuedAt, now]);
        if (p.phase === 'Evacuating') {
          evacuating--;
          if (p.evacuating !== undefined) p.took = now - p.evacuating;
        }
        if (next === 'Queued') p.queuedAt = now;
        if (next === 'Evacuating') {
          p.evacuating = now;
          began.push(now);
          evacuating++;
          maxEvacuating = Math.max(maxEvacuating, evacuating);
        }
        p.phase = next;
      },
    });
    const holders = new Map<string, string>();
    void runWatch<KubeObject & { spec?: { holderIdentity?: string } }>({
      k,
      path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
      signal: stop.signal,
      log,
      onEvent: (type, l) => {
        const name = l.metadata.name ?? '';
        if (!name.startsWith('drainer-evacuation-')) return;
        const holder = type === 'DELETED' ? '' : (l.spec?.holderIdentity ?? '');
        if (holders.get(name) && !holder) freed.push(Date.now());
        holders.set(name, holder);
      },
    });
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
    await until(
      'every node evacuated',
      () => [...phases.values()].every((x) => x.phase === 'Evacuated' || x.phase === 'Failed'),
      Math.max(300_000, size * 3000),
      500,
    );
    const rollEnd = Date.now();
    say(size, 'every node evacuated');
    const r1 = await window(c);
    const s2 = sumStats(await pack.stats());
    const rollS = (rollEnd - rollStart) / 1000;
    let queuedMs = 0;
    let queuedRequests = 0;
    for (const [n, x] of phases) {
      for (const [a, z] of x.queued) {
        queuedMs += z - a;
        queuedRequests += (s2.requests[n] ?? []).filter((t) => t >= a && t < z).length;
      }
    }
    const took = [...phases.values()].map((x) => x.took ?? 0).filter((t) => t > 0);
    // each start after the first `budget` follows a slot freed before it (first freed, first taken)
    const handoffs: number[] = [];
    const frees = [...freed].sort((a, b) => a - b);
    for (const t of began.slice(o.budget).sort((a, b) => a - b)) {
      const f = frees.findIndex((x) => x <= t);
      if (f >= 0) handoffs.push(t - frees.splice(f, 1)[0]!);
    }
    const queuedNodes = [...phases.values()].filter((x) => x.queued.length > 0).length;
    const roll: RollFigures = {
      nodes: size,
      evacuated: [...phases.values()].filter((x) => x.phase === 'Evacuated').length,
      makespanS: rollS,
      idealS: idealMakespan(took, o.budget) / 1000,
      queuedNodeMinutes: queuedMs / 60_000,
      queuedRequests,
      // per simulated minute, as the sandbox's fleet scenario counts: the waits last as long as the
      // evacuations ahead, which run on the sandbox's clock (×scale); real minutes in perRealMinute
      perQueuedNodeMinute: queuedMs > 0 ? queuedRequests / ((queuedMs / 60_000) * o.scale) : 0,
      perRealMinute: queuedMs > 0 ? queuedRequests / (queuedMs / 60_000) : 0,
      perQueuedNode: queuedNodes ? queuedRequests / queuedNodes : 0,
      handoffs,
      requestsPerSecond:
        (requestsOf(r1.samples) - requestsOf(r0.samples) - own.count(r0.at, r1.at)) / rollS -
        baselinePerSecond,
      maxEvacuating,
    };
    const cpuRoll = ((s2.cpu - s1.cpu) / rollS / size) * 1000;

    let restart: RestartFigures | undefined;
    let restartError: string | undefined;
    // a restart that fails costs its own figures, not the idle and roll ones measured before it
    if (o.restart && size === Math.max(...o.sizes))
      restart = await restartApiServer(o.restart, c, idle, baselinePerSecond).catch((err: unknown) => {
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

/**
 * Until the agents' start-up is over: in the last `windowMs` no agent made more than one request
 * (its node Lease renewal, every half of fleet.agentLeaseDuration; a thousand agents that started apart are never all silent).
 */
async function quietAgents(pack: Pack, windowMs: number, timeoutMs: number): Promise<void> {
  // the agents still busy at the last look, for the message if they never settle
  let busy: [string, number][] = [];
  await until(
    'the agents idle',
    async () => {
      const r = sumStats(await pack.stats()).requests;
      const since = Date.now() - windowMs;
      busy = Object.entries(r)
        .map(([node, ts]): [string, number] => [node, ts.filter((t) => t >= since).length])
        .filter(([, n]) => n > 1)
        .sort((a, b) => b[1] - a[1]);
      return busy.length === 0;
    },
    timeoutMs,
    1000,
  ).catch((err: unknown) => {
    const top = busy.slice(0, 3).map(([node, n]) => `${node} ${n}`);
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}: ${busy.length} agents made more than one request in the last ${windowMs / 1000} s (most: ${top.join(', ')})`,
    );
  });
}

async function sh(cmd: string, timeoutMs: number): Promise<void> {
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) =>
    execFile('bash', ['-c', cmd], { timeout: timeoutMs }, (err, _o, stderr) =>
      err ? reject(new Error(`${cmd}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`)) : resolve(),
    ),
  );
}

async function restartApiServer(
  cmds: { stop: string; start: string },
  c: ReturnType<typeof credentials>,
  idle: IdleFigures,
  baselinePerSecond: number,
): Promise<RestartFigures> {
  const before = watchesOf((await window(c)).samples);
  const down = Date.now();
  await sh(cmds.stop, 180_000);
  // a stop command may return while the API server still drains its requests: start only once it is gone
  await until(
    'the API server stopped',
    async () =>
      !(await window(c).then(
        () => true,
        () => false,
      )),
    120_000,
    500,
  );
  await sh(cmds.start, 300_000);
  let prev: Window | undefined;
  let back: number | undefined;
  let rewatch: number | undefined;
  let after = 0;
  let peak = 0;
  const end = Date.now() + 120_000;
  // a fresh process: its counters start at 0; one scrape a second
  while (Date.now() < end) {
    const w = await window(c).catch(() => undefined);
    if (w) {
      back ??= w.at;
      after = watchesOf(w.samples);
      if (prev) {
        const s = (w.at - prev.at) / 1000;
        const started =
          requestsOf(w.samples) - requestsOf(prev.samples) + Math.max(0, after - watchesOf(prev.samples));
        peak = Math.max(peak, started / s);
      } else {
        // a fresh process's counters hold all it answered since it started, not one second's
        const startedAt = total(w.samples, 'process_start_time_seconds');
        const up = startedAt > 0 ? Math.max(1, w.at / 1000 - startedAt) : 1;
        peak = Math.max(peak, (requestsOf(w.samples) + after) / up);
      }
      if (rewatch === undefined && after >= before) rewatch = (w.at - back) / 1000;
      prev = w;
      if (rewatch !== undefined && Date.now() - back > rewatch * 1000 + 20_000) break;
    }
    await sleep(1000);
  }
  return {
    downS: ((back ?? Date.now()) - down) / 1000,
    rewatchS: rewatch,
    watchesBefore: before,
    watchesAfter: after,
    peakPerSecond: Math.max(0, peak - baselinePerSecond),
    idlePerSecond: idle.requestsPerSecond,
  };
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
