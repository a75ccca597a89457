// fleet-real's settings (the environment), its rows, its notes and its plot (docs/fleet-real-requests.svg).
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { logLogSvg } from '../lib/plot.ts';
import { atMost, info, type Figure, type ScenarioResult } from '../lib/report.ts';
import { restartRows } from './fleet-real-restart.ts';
import { STATUS_REPORT_MS } from '../lib/kubelets.ts';
import { percentile, round } from '../lib/stats.ts';
import {
  earlierRuns,
  fleetReal,
  type FailedSize,
  type FleetRealOptions,
  type SizeRun,
} from './fleet-real.ts';

export const FLEET_REAL_TITLE = 'fleet on a real API server';
export const FLEET_REAL_PLOT = 'docs/fleet-real-requests.svg';
const BUDGET = 10;
const IDLE_SECONDS = 300;

type Env = Readonly<Record<string, string | undefined>>;

/** The options from the environment, or the one line that says why the scenario does not run. */
export function fleetRealSettings(env: Env): FleetRealOptions | string {
  const file = env.DRAINER_FLEET_KUBECONFIG;
  if (!file)
    return 'fleet-real: skipped, no DRAINER_FLEET_KUBECONFIG (the kubeconfig of a real API server for the bench; see BENCHMARKS.md "fleet on a real API server")';
  const sizes = (env.DRAINER_FLEET_SIZES ?? '10,100,1000').split(',').map(Number);
  const bad = sizes.find((s) => !Number.isInteger(s) || s < 1);
  if (bad !== undefined)
    throw new Error(`DRAINER_FLEET_SIZES: ${env.DRAINER_FLEET_SIZES} is not a list of fleet sizes`);
  const perProcess = Number(env.DRAINER_FLEET_AGENTS_PER_PROCESS ?? 250);
  if (!Number.isInteger(perProcess) || perProcess < 1)
    throw new Error(
      `DRAINER_FLEET_AGENTS_PER_PROCESS: ${env.DRAINER_FLEET_AGENTS_PER_PROCESS} is not a positive integer`,
    );
  const earlier = env.DRAINER_FLEET_EARLIER;
  const stop = env.DRAINER_FLEET_APISERVER_STOP;
  const start = env.DRAINER_FLEET_APISERVER_START;
  return {
    kubeconfigYaml: readFileSync(file, 'utf8'),
    sizes,
    perProcess,
    budget: BUDGET,
    idleSeconds: IDLE_SECONDS,
    // as long as the idle window: the control plane's periodic requests average out alike in both (a
    // 20 s baseline missed or caught whole rounds of them, ±0.006 requests/s per agent at 10 agents)
    baselineSeconds: IDLE_SECONDS,
    // a migration of 200 simulated s lasts 10 real s: at 20 s (1 real s) the agents' own per-node
    // steps, on 2 cores shared with the control plane, were most of each evacuation, and makespan /
    // ideal measured them rather than the schedule
    scale: 20,
    migrationSeconds: 200,
    ...(stop && start ? { restart: { stop, start } } : {}),
    ...(earlier ? { earlier: earlierRuns(readFileSync(earlier, 'utf8')) } : {}),
  };
}

const n = (x: number) => x.toLocaleString('en-US');
const agentsOf = (r: SizeRun) => `${n(r.agents)} agents`;

export function fleetRealFigures(runs: readonly SizeRun[], failed: readonly FailedSize[] = []): Figure[] {
  const notRun = failed.map((f): Figure => ({
    figure: `${n(f.agents)} agents: measured`,
    value: `no: ${f.why}`,
    goal: 'yes',
    pass: false,
  }));
  return [
    ...notRun,
    ...runs.flatMap((r): Figure[] => {
      const a = agentsOf(r);
      const f: Figure[] = [
        atMost(
          `${a}: idle requests per second per agent`,
          round(r.idle.requestsPerSecond / r.agents, 4),
          0.02,
        ),
        info(`${a}: idle requests per second, whole fleet`, round(r.idle.requestsPerSecond, 2)),
        info(`${a}: watches held per agent`, round(r.idle.watches / r.agents, 2)),
        info(`${a}: idle bytes per second per agent`, round(r.idle.bytesPerSecond / r.agents, 1), 'B'),
        // a fleet no larger than the budget never waits: nothing queued to count, nothing handed off
        ...(r.agents > BUDGET
          ? [
              atMost(
                `${a}: requests per queued node per minute (budget ${BUDGET})`,
                round(r.roll.perQueuedNodeMinute, 2),
                2,
              ),
              atMost(
                `${a}: hand-off p99, slot freed → next node Evacuating`,
                round(percentile(r.roll.handoffs, 99) / 1000, 2),
                2,
                's',
              ),
              info(`${a}: hand-off p50`, round(percentile(r.roll.handoffs, 50) / 1000, 2), 's'),
            ]
          : [
              info(
                `${a}: requests per queued node, hand-offs (budget ${BUDGET})`,
                'none: every node started at once',
              ),
            ]),
        atMost(`${a}: makespan / ideal (budget ${BUDGET})`, round(r.roll.makespanS / r.roll.idealS, 3), 1.1),
        info(
          `${a}: agent RSS per agent (${r.agents / r.processes} agents per process)`,
          round(r.rssMbPerAgent, 2),
          'MB',
        ),
        info(
          `${a}: agent CPU per agent, idle / roll`,
          `${round(r.cpuIdleMsPerSecond, 3)} / ${round(r.cpuRollMsPerSecond, 3)}`,
          'ms/s',
        ),
      ];
      if (r.restart) f.push(...restartRows(a, r.agents, r.restart));
      return f;
    }),
  ];
}

const verbs = (v: Record<string, number>) =>
  Object.entries(v)
    .sort((a, b) => b[1] - a[1])
    .map(([k, c]) => `${k} ${c}`)
    .join(', ');

export function fleetRealNotes(
  o: FleetRealOptions,
  runs: readonly SizeRun[],
  version: string,
  failed: readonly FailedSize[] = [],
): string[] {
  const notes = [
    `Kubernetes ${version}: the realk8s kit's control plane only (\`UP_NODE=0\`: etcd, kube-apiserver, kube-controller-manager, kube-scheduler; no kubelet), with its own KIT_DIR and ports beside the one-node cluster. The bench builds and starts nothing of it: it reads DRAINER_FLEET_KUBECONFIG (the kit's admin.kubeconfig, system:masters: every agent uses it, so API Priority and Fairness exempts them as it would not a ServiceAccount), and restarts the API server with DRAINER_FLEET_APISERVER_STOP / _START (shell commands) when they are set.`,
    `Per size: N Node objects (labelled openstack-compute-node=enabled, created by the bench; the node lifecycle controller marks their Ready condition Unknown ~40 s later, as no kubelet renews them, about 2.5 Nodes a second: the bench waits for that before measuring). N real agents, the production code wired as \`drainer daemon\` wires one (src/demo/agents.ts: createNodeAgent, the plugins, the daemon's watch settings, resyncInterval 300 s, fleet.maxConcurrentEvacuations ${o.budget}), each with its own Kubernetes client, connections, watches, node Lease, drain gate and Nova session; packed ${o.perProcess} to a child process (${runs.map((r) => `${n(r.agents)}: ${r.processes} process${r.processes > 1 ? 'es' : ''}`).join(', ')}); nothing shared between two agents that two pods would not share but the process (event loop, heap, the module code). Nova: the sandbox's (one compute host per node, disabled by the operator beforehand, one server each; 5 spare hosts; migrations ${o.migrationSeconds} simulated s at clock ×${o.scale}). The gate pods have no kubelet to run them: the bench reports each Running and Ready once (one status write per pod), as a kubelet would. Nor the Nodes: from before the baseline on, the bench posts each Node's status every ${STATUS_REPORT_MS / 60_000} minutes (the kubelet's nodeStatusReportFrequency), the Nodes spread evenly over the period, as the kubelet writes it (a strategic merge patch of the Ready condition's lastHeartbeatTime), so each agent's Node watch brings it that event as on a real node; the condition stays Unknown as the node lifecycle controller set it (a report of True would have that controller mark it Unknown again 40 s later and change the Node's taints, no kubelet renewing the Nodes' Leases here).`,
    `Measured from the API server's /metrics: requests = apiserver_request_total without WATCH and CONNECT (a watch is counted when it ends), less the bench's own requests (the Nodes' status reports, the gate pods' status writes, the roll's cordons: the bench logs each as it is answered, and takes those of each window out of it, the baseline's too) and less the control plane's own rate in a ${o.baselineSeconds} s baseline before the agents started (as long as the idle window, so that its periodic requests, a GET of namespaces every few seconds, a LIST of services every minute or so, average out alike in both; controllers, the API server's own Lease, the bench's two watches: ${runs.map((r) => `${n(r.agents)}: ${round(r.idle.baselinePerSecond, 2)}/s`).join(', ')}); watches held = apiserver_longrunning_requests{verb="WATCH"} less the baseline's; bytes = apiserver_response_sizes_sum + apiserver_watch_events_sizes_sum, less the baseline's. Idle: ${o.idleSeconds} s (a multiple of the node Lease renewal period, half of fleet.agentLeaseDuration: the agents start together and renew nearly in step; and as long as the Node and NodeMaintenance watches' 300 s, so their re-opens are in it) with every node in service, after every agent was ready and no agent had made more than one request (its node Lease renewal) in 10 s. A request to an API group that is not installed (the agents' look for the absent nodemaintenance.kubevirt.io group) is answered 404 by the API server's not-found handler and is not in apiserver_request_total: the agents' own count has it.`,
    ...runs.map(
      (r) =>
        `${agentsOf(r)} idle: ${round(r.idle.requestsPerSecond, 3)} requests/s by the API server (${round(r.idle.agentRequestsPerSecond, 3)}/s as the agents counted their own; the bench's own taken out: ${round(r.idle.benchPerSecond ?? 0, 3)}/s, ${verbs(r.idle.benchByVerb ?? {}) || 'none'}), ${round(r.idle.watches, 0)} watches held (${round(r.idle.watches / r.agents, 2)} per agent), ${round(r.idle.bytesPerSecond / 1024, 1)} KiB/s, ${round(r.idle.watchEventsPerSecond, 2)} watch events/s; requests in the window by verb and resource: ${verbs(r.idle.byVerb) || 'none'}. Objects in etcd (apiserver_storage_objects): ${Object.entries(
          r.objects,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(
            ', ',
          )}. All ${n(r.agents)} ready ${round(r.startSeconds, 1)} s after the first process was started. RSS ${round(r.rssMbPerProcess, 0)} MB per process.`,
    ),
    `The roll: every node cordoned at once (merge patches, 50 at a time), budget ${o.budget}. Requests per queued node per minute: each agent's Kubernetes requests (its own count, with times) while the bench's Node watch showed its record Queued, over the node-minutes spent Queued on the sandbox's clock (real minutes × ${o.scale}), as the sandbox's fleet scenario counts: the waits last as long as the evacuations ahead, which run on that clock, and the requests come per hand-off, not per minute (the real-minute figure below is for context). The Node watch lags the API server a little: a request just after a record left Queued may count. Hand-off: a slot Lease's holder cleared (the bench's Lease watch) → the next record Evacuating (its Node watch), paired first freed, first taken. Ideal = Σ per-node evacuation / budget.`,
    ...runs.map(
      (r) =>
        `${agentsOf(r)} roll: ${r.roll.evacuated} of ${r.roll.nodes} Evacuated, makespan ${round(r.roll.makespanS, 1)} s, ideal ${round(r.roll.idealS, 1)} s, most Evacuating at once ${r.roll.maxEvacuating}; ${r.roll.queuedRequests} requests over ${round(r.roll.queuedNodeMinutes, 2)} queued node-minutes (real; ${round(r.roll.perRealMinute, 1)} per queued node per real minute; ${round(r.roll.perQueuedNode, 2)} per queued node); ${r.roll.handoffs.length} hand-offs, p50 ${round(percentile(r.roll.handoffs, 50) / 1000, 2)} s, p99 ${round(percentile(r.roll.handoffs, 99) / 1000, 2)} s; the fleet's ${round(r.roll.requestsPerSecond, 1)} requests/s during the roll.`,
    ),
  ];
  const restarted = runs.find((r) => r.restart);
  if (restarted?.restart) {
    const x = restarted.restart;
    notes.push(
      `API-server restart with ${n(restarted.agents)} agents: DRAINER_FLEET_APISERVER_STOP then _START; down ${round(x.downS, 1)} s; watches ${round(x.watchesBefore, 0)} before, ${round(x.watchesAfter, 0)} after; every watch back ${x.rewatchS === undefined ? 'not within 120 s' : `${round(x.rewatchS, 1)} s after the API server answered again`}; requests started per second (answered requests plus newly held watches, 1 s buckets, the first from the new process's start, as its counters begin there; less the baseline) peaked at ${round(x.peakPerSecond, 1)} against ${round(x.idlePerSecond, 2)} idle.`,
    );
  } else {
    const failedRestart = runs.find((r) => r.restartError !== undefined);
    notes.push(
      failedRestart
        ? `No API-server restart was measured: with ${n(failedRestart.agents)} agents its commands failed: ${failedRestart.restartError ?? ''}`
        : 'No API-server restart was measured: DRAINER_FLEET_APISERVER_STOP and _START were not set, or the largest size did not run.',
    );
  }
  for (const f of failed)
    notes.push(
      `**${n(f.agents)} agents: not measured.** The run stopped: ${f.why}. What it needs is written below the table's figures, in this section's last notes.`,
    );
  const merged = runs.filter((r) => !o.sizes.includes(r.agents));
  if (merged.length)
    notes.push(
      `${merged.map(agentsOf).join(' and ')}: measured by an earlier invocation with the same settings (DRAINER_FLEET_EARLIER names its stderr), merged into this table; ${o.sizes.map((x) => `${n(x)} agents`).join(', ')} by this one.`,
    );
  notes.push(
    `Plot: [${FLEET_REAL_PLOT}](${FLEET_REAL_PLOT}), requests per second against fleet size (log–log), idle and during the roll.`,
  );
  return notes;
}

/** The API server's version (its /version), for the notes. */
async function version(o: FleetRealOptions): Promise<string> {
  const { createKubeClients } = await import('../../src/kube/client.ts');
  const k = createKubeClients({ kubeconfigYaml: o.kubeconfigYaml });
  const v = await k.request<{ gitVersion?: string }>({ path: '/version' }).catch(() => undefined);
  return v?.gitVersion ?? 'unknown';
}

export async function fleetRealResult(
  o: FleetRealOptions,
  repo: string,
): Promise<Omit<ScenarioResult, 'seconds'>> {
  const v = await version(o);
  const failed: FailedSize[] = [];
  const runs = await fleetReal(o, o.earlier, failed);
  await writeFile(
    path.join(repo, FLEET_REAL_PLOT),
    logLogSvg({
      title: `drainer agents on kube-apiserver ${v}: requests per second`,
      xLabel: 'agents (one per node)',
      yLabel: 'requests per second, whole fleet',
      series: [
        { name: 'idle', color: '#1f77b4', points: runs.map((r) => [r.agents, r.idle.requestsPerSecond]) },
        {
          name: `rolling maintenance, budget ${o.budget}`,
          color: '#d62728',
          points: runs.map((r) => [r.agents, r.roll.requestsPerSecond]),
        },
      ],
    }),
  );
  return {
    scenario: 'fleet-real',
    title: FLEET_REAL_TITLE,
    command: 'node bench/run.ts fleet-real',
    figures: fleetRealFigures(runs, failed),
    notes: fleetRealNotes(o, runs, v, failed),
    extra: [`![requests per second against fleet size](${FLEET_REAL_PLOT})`],
  };
}
