// Fleet maintenance: 12 hypervisors × 10 servers cordoned at once, one agent per node (built as the
// daemon builds them), with a cluster-wide budget. Measured from the Node records' timeline (one
// watch): the most nodes Evacuating at once, the fleet makespan against Σ(per-node evacuation
// time) / budget, and the Kubernetes requests the agents of queued nodes make per minute of waiting
// (the Lease watch each agent opens at start and keeps open is counted on its own, from the
// sandbox's request log).
// The rack's Nova services are disabled by the operator first (README, Fleet maintenance), so the
// servers go to the spare hosts and never move twice.
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import type { KubeNode } from '../../src/kube/types.ts';
import { runWatch } from '../../src/kube/watch.ts';
import { mergeConfig, startAgents, type DemoAgents } from '../../src/demo/agents.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import { atMost, info, type Figure } from '../lib/report.ts';
import { idealMakespan, round } from '../lib/stats.ts';
import { sleep, until } from '../lib/wait.ts';

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
  /** Per simulated minute: the waits are on the sandbox's scaled clock (see the notes). */
  readonly requestsPerQueuedMinute: number;
  readonly requestsPerRealQueuedMinute: number;
  /** Lease list+watch requests of all agents: opened with the agents (before the cordon), and during the run. */
  readonly leaseWatchOpened: number;
  readonly leaseWatchDuring: number;
  /** The per-queued-minute figure with every Lease list+watch of the run charged to the waits. */
  readonly requestsPerQueuedMinuteCharged: number;
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

/** A GET of the Leases collection: the agents' Lease watch (its list, or the watch itself). */
const leaseWatchRequest = (r: { method: string; path: string }): boolean =>
  r.method === 'GET' && /\/leases(\?|$)/.test(r.path);

async function runOnce(o: FleetOptions, budget: number): Promise<FleetRun> {
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
  const phase = new Map<string, string>();
  const queuedSince = new Map<string, number>();
  let queuedMs = 0;
  let queuedRequests = 0;
  const evacuating = new Set<string>();
  const began = new Map<string, number>();
  const took = new Map<string, number>();
  let maxEvacuating = 0;
  let lastEnd = 0;
  let agents: DemoAgents | undefined;
  try {
    // one agent per node with the daemon's watch settings (default server-side timeouts)
    agents = startAgents({
      nodes: rack,
      config: base,
      kubeconfigYaml: sb.kube.kubeconfig(),
      log,
      signal: stop.signal,
      watch: 'daemon',
      onApiRequest: (node, api) => {
        if (api === 'kubernetes' && phase.get(node) === 'Queued') queuedRequests++;
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
    await sleep(200);
    const leaseWatches = () => sb.kube.requestLog.filter(leaseWatchRequest).length;
    const leaseWatchOpened = leaseWatches();
    const start = performance.now();
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
    const makespanMs = lastEnd - start;
    const sum = [...took.values()];
    const idealMs = idealMakespan(sum, budget);
    const queuedMinutes = queuedMs / 60_000;
    const leaseWatchDuring = leaseWatches() - leaseWatchOpened;
    const perQueuedMinute = (n: number) => (queuedMinutes > 0 ? n / (queuedMinutes * o.scale) : 0);
    return {
      budget,
      maxEvacuating,
      makespanS: makespanMs / 1000,
      idealS: idealMs / 1000,
      ratio: makespanMs / idealMs,
      queuedMinutes,
      queuedRequests,
      requestsPerQueuedMinute: perQueuedMinute(queuedRequests),
      requestsPerRealQueuedMinute: queuedMinutes > 0 ? queuedRequests / queuedMinutes : 0,
      evacuated: rack.filter((n) => phase.get(n) === 'Evacuated').length,
      leaseWatchOpened,
      leaseWatchDuring,
      // those made while Queued are in queuedRequests already; the rest are added
      requestsPerQueuedMinuteCharged: perQueuedMinute(queuedRequests + leaseWatchOpened),
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
      2,
    ),
    info(
      `budget ${r.budget}: the same per real minute (compressed clock)`,
      round(r.requestsPerRealQueuedMinute, 1),
    ),
    info(
      `budget ${r.budget}: Lease list+watch requests per agent, opened with the agent (not in the figure above)`,
      round(r.leaseWatchOpened / r.agents, 2),
    ),
    info(
      `budget ${r.budget}: requests per queued node per minute waiting, those Lease watches charged to the waits`,
      round(r.requestsPerQueuedMinuteCharged, 2),
    ),
    info(`budget ${r.budget}: fleet makespan`, round(r.makespanS, 1), 's'),
  ]);
  return { figures, runs };
}

export function fleetNotes(o: FleetOptions, runs: readonly FleetRun[]): string[] {
  return [
    `${o.hosts} hypervisors × ${o.serversPerHost} servers cordoned at once (one patch each, concurrently), one agent per node in this process with the daemon's settings; migrations ${o.migrationSeconds} simulated s at clock scale ${o.scale}, 2 per host at once; the rack's Nova services disabled by the operator beforehand, 3 spare hosts take everything.`,
    'Timeline from one watch on the Nodes (the drainer.dev/state record): per-node evacuation = Evacuating → Evacuated; makespan = first cordon → last Evacuated; ideal = Σ per-node / budget (real seconds).',
    `Requests per queued minute: every Kubernetes request an agent made while its node was Queued, divided by the node-minutes spent Queued on the sandbox clock (real minutes × ${o.scale}): the waits last as long as the evacuations ahead, which run on that clock, and the requests come per hand-off, not per minute. The real-minute figure is given for context. Paid once per queued node: the record write of phase Queued (it carries the drainer.dev/queued label in the same Node PATCH; counted when the observer sees Queued before the agent has its answer), one list of the queued Nodes (label selector) when a slot is free, the take (a Lease create or PUT; a 409 costs one more), one EvacuationQueued Event (only when it had to wait; with a NodeMaintenance also one status write), and the record write of phase Evacuating (the label comes off in it). Nothing else is paid per hand-off: waiters learn of them from the Lease watch and drop the nodes ahead that took a slot.`,
    `The Lease watch is not paid per wait: each agent with a budget opens one list+watch of the fleet namespace's Leases (a handful of objects) when it starts and keeps it open, re-watching about every 5 minutes (the server-side watch timeout), queued or not. Those opening requests come before the cordon, so the figure above leaves them out; they are counted from the sandbox's request log and shown per agent, and a second figure adds them (${runs.map((r) => r.leaseWatchOpened).join(' and ')} requests) to the waits' requests as if every agent had lived for this one wait only. A re-watch or relist made while Queued is in the main figure (Lease list+watch requests after the cordon: ${runs.map((r) => r.leaseWatchDuring).join(' and ')}).`,
    ...runs.map(
      (r) =>
        `budget ${r.budget}: ${r.evacuated} Evacuated, makespan ${round(r.makespanS, 1)} s, ideal ${round(r.idealS, 1)} s, ${r.queuedRequests} requests over ${round(r.queuedMinutes, 2)} queued node-minutes.`,
    ),
  ];
}
