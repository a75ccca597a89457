// Fleet maintenance: 12 hypervisors × 10 servers cordoned at once, one agent per node (built as the
// daemon builds them), with a cluster-wide budget. Measured from the Node records' timeline (one
// watch): the most nodes Evacuating at once, the fleet makespan against Σ(per-node evacuation
// time) / budget, and the Kubernetes requests the agents of queued nodes make per minute of waiting
// (the Lease watch each agent opens at its first wait included; the sandbox's request log shows
// what kinds they are).
// The rack's Nova services are disabled by the operator first (README, Fleet maintenance), so the
// servers go to the spare hosts and never move twice.
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import type { KubeNode } from '../../src/kube/types.ts';
import { runWatch } from '../../src/kube/watch.ts';
import { mergeConfig, startAgents, type DemoAgents } from '../../src/demo/agents.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import { fleetRequests, kindsText, requestKind, type FleetRequests } from '../lib/fleet-requests.ts';
import { atMost, info, type Figure } from '../lib/report.ts';
import { idealMakespan, round } from '../lib/stats.ts';
import { quiet, until } from '../lib/wait.ts';

export interface FleetOptions {
  readonly hosts: number;
  readonly serversPerHost: number;
  /** Simulated seconds per real second (the sandbox's migrations). */
  readonly scale: number;
  /** Simulated seconds of one live migration. */
  readonly migrationSeconds: number;
}

export interface FleetRun {
  readonly budget: number;
  readonly maxEvacuating: number;
  readonly makespanS: number;
  readonly idealS: number;
  readonly ratio: number;
  readonly queuedMinutes: number;
  readonly queuedRequests: number;
  /** The same requests by kind (method and path, names folded): every one attributed. */
  readonly queuedKinds: ReadonlyMap<string, number>;
  /** Per simulated minute: the waits are on the sandbox's scaled clock (see the notes). */
  readonly requestsPerQueuedMinute: number;
  readonly requestsPerRealQueuedMinute: number;
  /** Nodes that waited Queued; with one more request each (the write of phase Evacuating), per minute. */
  readonly queuedNodes: number;
  readonly withExitWrites: number;
  /** The fleet's requests of all agents, from the sandbox's request log: before the cordon, and during the run. */
  readonly before: FleetRequests;
  readonly during: FleetRequests;
  readonly agents: number;
  readonly evacuated: number;
}

function world(o: FleetOptions) {
  const rack = Array.from({ length: o.hosts }, (_, i) => `hv-${String(i + 1).padStart(2, '0')}`);
  const spares = ['spare-1', 'spare-2', 'spare-3'];
  const big = { ramMb: 4_000_000, vcpus: 4000, diskGb: 400_000, maxConcurrentLiveMigrations: 8 };
  return {
    rack,
    scenario: {
      name: 'fleet',
      clock: { scale: o.scale },
      timings: { podStartSeconds: 1 },
      nodes: [...rack, ...spares].map((name) => ({ name })),
      openstack: {
        migrationSeconds: o.migrationSeconds,
        hosts: [
          ...rack.map((name) => ({
            name,
            maxConcurrentLiveMigrations: 2,
            disabledReason: 'rack r7 maintenance',
          })),
          ...spares.map((name) => ({ name, ...big })),
        ],
        servers: rack.flatMap((host) =>
          Array.from({ length: o.serversPerHost }, (_, i) => ({
            name: `${host}-vm${i + 1}`,
            project: 'alpha',
            host,
          })),
        ),
      },
      kubevirt: { installed: false },
      daemonsets: [{ name: 'node-agent', namespace: 'kube-system' }],
    },
  };
}

/** Config merged over the run's own (fleet-blockers.ts: the blockers), and a hook at the cordon. */
export interface RunExtra {
  readonly config?: Record<string, unknown>;
  readonly onCordon?: () => void;
  readonly onDone?: () => void;
}

export async function runOnce(o: FleetOptions, budget: number, extra: RunExtra = {}): Promise<FleetRun> {
  const { rack, scenario } = world(o);
  const sb = await startSandbox({ scenario, scale: o.scale });
  const stop = new AbortController();
  const log = createLogger({ level: 'silent' });
  const base = mergeConfig(sb.drainerConfig, {
    resyncInterval: 300,
    server: { enabled: false },
    nova: { pollInterval: 0.2, retryBackoff: 0.5, maxConcurrentMigrations: 2 },
    drain: { evictionRetryInterval: 0.5 },
    fleet: { maxConcurrentEvacuations: budget },
  });
  const config = extra.config ? mergeConfig(base, extra.config) : base;
  const phase = new Map<string, string>();
  const queuedSince = new Map<string, number>();
  let queuedMs = 0;
  let queuedRequests = 0;
  const queuedKinds = new Map<string, number>();
  const evacuating = new Set<string>();
  const began = new Map<string, number>();
  const took = new Map<string, number>();
  let maxEvacuating = 0;
  let lastEnd = 0;
  let agents: DemoAgents | undefined;
  const recordPhase = (node: string): string | undefined =>
    parseRecord(sb.kube.store.find('nodes', undefined, node)?.metadata.annotations?.[STATE_ANNOTATION])
      ?.phase;
  try {
    // one agent per node with the daemon's watch settings (default server-side timeouts)
    agents = startAgents({
      nodes: rack,
      config,
      kubeconfigYaml: sb.kube.kubeconfig(),
      log,
      signal: stop.signal,
      watch: 'daemon',
      // the record as the API server has it when the answer comes (read in-process, no watch lag)
      onApiRequest: (node, api, _code, _watch, request) => {
        if (api !== 'kubernetes' || recordPhase(node) !== 'Queued') return;
        queuedRequests++;
        const kind = request ? requestKind(request) : 'unknown';
        queuedKinds.set(kind, (queuedKinds.get(kind) ?? 0) + 1);
      },
    });
    const all = agents;
    await until('agents ready', () => all.ready(), 60_000, 50);

    const observer = createKubeClients({ kubeconfigYaml: sb.kube.kubeconfig() });
    void runWatch<KubeNode>({
      k: observer,
      path: '/api/v1/nodes',
      signal: stop.signal,
      log,
      onEvent: (_t, n) => {
        const node = n.metadata.name ?? '';
        const p = parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.phase ?? 'InService';
        if (phase.get(node) === p) return;
        const now = performance.now();
        const was = phase.get(node);
        phase.set(node, p);
        if (was === 'Queued') queuedMs += now - (queuedSince.get(node) ?? now);
        if (p === 'Queued') queuedSince.set(node, now);
        if (p === 'Evacuating') {
          evacuating.add(node);
          began.set(node, now);
        } else if (evacuating.delete(node)) {
          took.set(node, now - (began.get(node) ?? now));
          lastEnd = now;
        }
        maxEvacuating = Math.max(maxEvacuating, evacuating.size);
      },
    });
    // the fleet idle before the cordon (a rack is cordoned long after its agents started): their
    // start-up requests (the drain gates coming to hold) are not counted as the queued nodes'
    await quiet('the agents idle', () => sb.kube.requestLog.length, 1000);
    // idle agents (nothing cordoned yet): no Lease watch of their own
    const logged = sb.kube.requestLog.length;
    const before = fleetRequests(sb.kube.requestLog);
    const start = performance.now();
    extra.onCordon?.();
    // kubectl cordon -l rack=r7: every node at once
    for (const n of rack)
      sb.kube.store.patch('nodes', undefined, n, 'application/merge-patch+json', {
        spec: { unschedulable: true },
      });
    await until(
      'every node evacuated',
      () => rack.every((n) => ['Evacuated', 'Failed'].includes(phase.get(n) ?? '')),
      170_000,
      50,
    );
    extra.onDone?.();
    const makespanMs = lastEnd - start;
    const sum = [...took.values()];
    const idealMs = idealMakespan(sum, budget);
    const queuedMinutes = queuedMs / 60_000;
    const during = fleetRequests(sb.kube.requestLog.slice(logged));
    const perQueuedMinute = (n: number) => (queuedMinutes > 0 ? n / (queuedMinutes * o.scale) : 0);
    return {
      budget,
      maxEvacuating,
      makespanS: makespanMs / 1000,
      idealS: idealMs / 1000,
      ratio: makespanMs / idealMs,
      queuedMinutes,
      queuedRequests,
      queuedKinds,
      requestsPerQueuedMinute: perQueuedMinute(queuedRequests),
      requestsPerRealQueuedMinute: queuedMinutes > 0 ? queuedRequests / queuedMinutes : 0,
      queuedNodes: queuedSince.size,
      withExitWrites: perQueuedMinute(queuedRequests + queuedSince.size),
      evacuated: rack.filter((n) => phase.get(n) === 'Evacuated').length,
      before,
      during,
      agents: rack.length,
    };
  } finally {
    stop.abort();
    await agents?.stop();
    await sb.close();
  }
}

export async function fleet(
  o: FleetOptions,
  budgets: readonly number[],
): Promise<{ figures: Figure[]; runs: FleetRun[] }> {
  const runs: FleetRun[] = [];
  for (const b of budgets) runs.push(await runOnce(o, b));
  const figures = runs.flatMap((r): Figure[] => [
    {
      figure: `budget ${r.budget}: most nodes Evacuating at once`,
      value: r.maxEvacuating,
      goal: `= ${r.budget}`,
      pass: r.maxEvacuating === r.budget,
    },
    atMost(`budget ${r.budget}: fleet makespan / (Σ per-node evacuation / budget)`, round(r.ratio, 3), 1.1),
    atMost(
      `budget ${r.budget}: Kubernetes requests per queued node per minute waiting`,
      round(r.requestsPerQueuedMinute, 2),
      // issue 51: with margin under the 2 it had (the same queue at budget 3 went 1.91 to 3.1)
      1.5,
    ),
    info(
      `budget ${r.budget}: the same per real minute (compressed clock)`,
      round(r.requestsPerRealQueuedMinute, 1),
    ),
    info(
      `budget ${r.budget}: Lease list+watch requests per agent over its life (its first wait's watch, in the figure above)`,
      round(
        (r.before.leaseWatches + r.before.leaseLists + r.during.leaseWatches + r.during.leaseLists) /
          r.agents,
        2,
      ),
    ),
    info(`budget ${r.budget}: fleet makespan`, round(r.makespanS, 1), 's'),
  ]);
  return { figures, runs };
}

export function fleetNotes(o: FleetOptions, runs: readonly FleetRun[]): string[] {
  return [
    `${o.hosts} hypervisors × ${o.serversPerHost} servers cordoned at once (one patch each, concurrently), one agent per node in this process with the daemon's settings; migrations ${o.migrationSeconds} simulated s at clock scale ${o.scale}, 2 per host at once; the rack's Nova services disabled by the operator beforehand, 3 spare hosts take everything.`,
    "Timeline from one watch on the Nodes (the drainer.dev/state record): per-node evacuation = Evacuating → Evacuated; makespan = first cordon → last Evacuated; ideal = Σ per-node / budget (real seconds). The cordon comes once the fleet is idle (no request to the API server for 1 s after every agent was ready), as a rack is cordoned long after its agents started: the drain gates coming to hold at start (a gate Pod list and PDB read per change of the gate objects) are not counted as the queued nodes' requests, as they were before (18 of the 70 requests of a budget-3 run).",
    `Requests per queued minute: every Kubernetes request of an agent answered while its node's record said Queued (read from the API server's store at the answer, in this process: no watch lag), divided by the node-minutes spent Queued on the sandbox clock (real minutes × ${o.scale}): the waits last as long as the evacuations ahead, which run on that clock, and the requests come per hand-off, not per minute. The real-minute figure is given for context. Paid once per queued node: the record write of phase Queued (it carries the drainer.dev/queued label in the same Node PATCH); at the agent's first wait, its Lease watch (one request: a watch without resourceVersion, answered with the existing Leases as ADDED events, then the changes; no list); one read of the queued Nodes ahead of it when a slot is free: as a slot was free when it queued (those ahead came at about the same moment, or they would have taken it), a page from etcd, label selector drainer.dev/queued<T+1 with limit 52, which holds the whole queue when it is no longer than a page (in a longer queue, those queued in the second before it come next, from the API server's cache, drainer.dev/queued>T-1000,drainer.dev/queued<T+1; a node that first reads at a hand-off, after waiting, or that comes back in its old place (a window opening lets a whole queue go at once), reads that window first, as deep in a roll's long queue it alone answers. Before a1dd149 every node read the window, then the page: 12 of the 69 requests of a budget-3 run); the take (a Lease create or PUT; a 409 costs one GET of that Lease more); one EvacuationQueued Event (only when it had to wait; with a NodeMaintenance also one status write); and the record write of phase Evacuating (the label comes off in it; answered after the record left Queued, so not counted: of the two Node writes, the one into the queue is). Nothing is paid per hand-off: waiters learn of them from the Lease watch and drop the nodes ahead that took a slot. A waiter reads the queue again before it takes a slot only when a node came back into it in its old place since its read (resumed, retried, let through by the start gate: that node writes the Lease drainer-queue-return, which the Lease watch brings), or its Lease watch re-opened since (b5f26f8 read it again before every take: 18 of the 112 requests of a budget-3 run). The fleet tools' timeout check at the record's first Queued look reads nothing: the Node's labels and the node's Machine come from the agent's own watches (it read the Node and listed every Machine: 24 more).`,
    `The Lease watch stays open for the agent's life (re-watching about every 5 minutes, the server-side timeout), so an agent's later waits pay no watch; an agent that never waits opens none. Here every agent waits once, so the figure carries one watch per queued node. From the sandbox's request log: ${runs.map((r) => `budget ${r.budget}: before the cordon ${r.before.leaseWatches} Lease watches and ${r.before.leaseLists} lists; during the run ${r.during.leaseWatches} watches, ${r.during.leaseLists} lists, ${r.during.queueLists} queue lists, ${r.during.leaseConflicts} Lease 409s, ${r.during.leaseGets} Lease GETs`).join('; ')}.`,
    `Counted with both Node writes of each queued node (${runs.map((r) => r.queuedNodes).join(' and ')} nodes queued): ${runs.map((r) => `budget ${r.budget}: ${round(r.withExitWrites, 2)}`).join(', ')} requests per queued node per minute.`,
    ...runs.map(
      (r) =>
        `budget ${r.budget}: ${r.evacuated} Evacuated, makespan ${round(r.makespanS, 1)} s, ideal ${round(r.idealS, 1)} s, ${r.queuedRequests} requests over ${round(r.queuedMinutes, 2)} queued node-minutes; by kind: ${kindsText(r.queuedKinds)}.`,
    ),
  ];
}
