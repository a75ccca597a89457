// The fleet with blockers set and not firing (issue 22): fleet.blockers.prometheus points at a stub
// Prometheus on 127.0.0.1 that counts its queries and answers "no alerts", and
// fleet.blockers.podSelector matches no pod. Every node is cordoned at once; measured like the
// fleet run (requests while Queued per queued node-minute) plus the Prometheus queries of the
// whole fleet, at 12 and at 120 agents: one verdict per interval is shared on the
// drainer-blockers Lease, so the queries do not grow with the agents.
import { createServer, type Server } from 'node:http';
import { atMost, info, type Figure } from '../lib/report.ts';
import { round } from '../lib/stats.ts';
import { runOnce, type FleetOptions, type FleetRun } from './fleet.ts';
import { kindsText } from '../lib/fleet-requests.ts';

export interface BlockersOptions extends FleetOptions {
  readonly budget: number;
  /** fleet.blockers.interval, seconds */
  readonly interval: number;
}

export interface BlockersRun {
  readonly agents: number;
  readonly run: FleetRun;
  readonly queries: number;
  readonly spanMinutes: number;
  readonly queriesPerMinute: number;
  readonly runSeconds: number;
}

/** A stub Prometheus: /api/v1/alerts answers no alert; every query counted with its time. */
async function stubPrometheus(): Promise<{ url: string; at: number[]; close(): Promise<void> }> {
  const at: number[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/api/v1/alerts')) at.push(performance.now());
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { alerts: [] } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  const port = typeof a === 'object' && a ? a.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    at,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function runBlockers(o: BlockersOptions): Promise<BlockersRun> {
  const prom = await stubPrometheus();
  let t0 = 0;
  let t1 = 0;
  try {
    const run = await runOnce(o, o.budget, {
      config: {
        fleet: {
          blockers: {
            prometheus: { url: prom.url, alertName: 'CephHealth.*|NovaComputeDown' },
            podSelector: 'app=backup',
            interval: o.interval,
          },
        },
      },
      onCordon: () => (t0 = performance.now()),
      onDone: () => (t1 = performance.now()),
    });
    const queries = prom.at.filter((t) => t >= t0 && t <= t1);
    // each query stands for one interval: n queries need (n - 1) intervals between the first and last
    const spanMs = queries.length ? (queries.at(-1) ?? 0) - (queries[0] ?? 0) + o.interval * 1000 : 1;
    const spanMinutes = spanMs / 60_000;
    return {
      agents: o.hosts,
      run,
      queries: queries.length,
      spanMinutes,
      queriesPerMinute: queries.length / spanMinutes,
      runSeconds: (t1 - t0) / 1000,
    };
  } finally {
    await prom.close();
  }
}

export async function fleetBlockers(
  sizes: readonly BlockersOptions[],
): Promise<{ figures: Figure[]; runs: BlockersRun[] }> {
  const runs: BlockersRun[] = [];
  for (const o of sizes) runs.push(await runBlockers(o));
  const figures = runs.flatMap((r, i): Figure[] => {
    const o = sizes[i];
    const interval = o?.interval ?? 1;
    const tag = `blockers set, not firing, ${r.agents} agents (budget ${o?.budget})`;
    return [
      atMost(
        `${tag}: Kubernetes requests per queued node per minute waiting`,
        round(r.run.requestsPerQueuedMinute, 2),
        2,
      ),
      atMost(
        `${tag}: Prometheus queries per minute, whole fleet (interval ${interval} s)`,
        round(r.queriesPerMinute, 2),
        round(60 / interval, 2),
      ),
      info(`${tag}: Prometheus queries over the run`, r.queries),
      info(`${tag}: nodes evacuated`, r.run.evacuated),
    ];
  });
  return { figures, runs };
}

export function blockersNotes(runs: readonly BlockersRun[]): string[] {
  return [
    'Blockers set and not firing: fleet.blockers.prometheus at a stub Prometheus on 127.0.0.1 (answers no alert, counts GET /api/v1/alerts) and fleet.blockers.podSelector app=backup (no such pod); every node cordoned at once, as in the fleet run (12 agents: the same world, budget 2; 120 agents: 2 servers each, budget 6).',
    "A node looks at the blockers when it queues and again when its slot comes (a blocker may have begun meanwhile). The Prometheus verdict is the fleet's: kept on the Lease drainer-blockers in the fleet namespace and read from the Lease watch each waiting agent keeps for the budget; when it is older than the interval, the first agent to need it claims the refresh (one Lease write at the read resourceVersion; racers get a 409 and wait for the answer on the watch), asks Prometheus once, and writes the verdict (a second Lease write). Per interval, fleet-wide: one query and two Lease writes, plus one refused write per agent that raced for the same claim. The pod selector costs one Pod list (field selector spec.nodeName) per check of a node.",
    'Prometheus queries per minute: the queries counted by the stub between the first cordon and the last node evacuated, over the span from the first to the last query plus one interval (n queries cannot be fewer than n - 1 intervals apart).',
    ...runs.map(
      (r) =>
        `${r.agents} agents: ${r.run.evacuated} Evacuated in ${round(r.runSeconds, 1)} s; ${r.queries} Prometheus queries over ${round(r.spanMinutes * 60, 1)} s; ${r.run.queuedRequests} Kubernetes requests over ${round(r.run.queuedMinutes, 2)} queued node-minutes (real), ${round(r.run.requestsPerQueuedMinute, 2)} per queued node per simulated minute, ${round(r.run.requestsPerRealQueuedMinute, 1)} per real minute; during the run ${r.run.during.leaseConflicts} Lease 409s, ${r.run.during.leaseGets} Lease GETs; while Queued, by kind: ${kindsText(r.run.queuedKinds)}.`,
    ),
  ];
}
