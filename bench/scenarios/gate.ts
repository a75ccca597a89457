// The drain gate: the real `kubectl drain` of a hypervisor node whose agent evacuates N servers.
// Each round drains the node that holds the servers (node-1, then node-2, and so on: the servers
// move back and forth), records when the last server left the host (Nova's state, real time) and
// when kubectl returned, then uncordons and waits until the gate is held again. Then the agents sit
// idle and the sandbox's request log says what the gates cost per node per hour.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { demoConfig, startAgents } from '../../src/demo/agents.ts';
import { gateName } from '../../src/kube/gate.ts';
import { GATE_WATCH_SECONDS } from '../../src/core/gate/keeper.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { setUnschedulable } from '../lib/kube.ts';
import { atMost, info, type Figure } from '../lib/report.ts';
import { run } from '../lib/child.ts';
import { round } from '../lib/stats.ts';
import { sleep, until } from '../lib/wait.ts';

export interface GateOptions {
  readonly rounds: number;
  readonly servers: number;
  /** Ordinary pods (a ReplicaSet) on the node that holds the servers. */
  readonly pods: number;
  /** Simulated seconds per real second. */
  readonly scale: number;
  /** Simulated seconds of one live migration. */
  readonly migrationSeconds: number;
  /** Real milliseconds the agents sit idle for the request count. */
  readonly idleMs: number;
  /**
   * fleet.agentLeaseDuration for this run (seconds, shorter than the default so that an idle window
   * holds many renewals); the per-node Lease's cost is scaled to the default from it.
   */
  readonly agentLeaseSeconds: number;
  /** The default fleet.agentLeaseDuration the cost is stated for. */
  readonly defaultAgentLeaseSeconds: number;
}

export interface GateRound {
  readonly node: string;
  /** Real seconds from the last server leaving the host to kubectl drain returning (< 0: early). */
  readonly lagS: number;
  readonly drainS: number;
}

export interface GateBenchResult {
  readonly rounds: GateRound[];
  readonly idleRequests: number;
  readonly idleHours: number;
  readonly perNodeHour: number;
  /** Requests to the agents' own Leases (drainer-node-<node>) in the idle window. */
  readonly leaseRequests: number;
  readonly figures: Figure[];
}

const NODES = ['node-1', 'node-2'];

function world(o: GateOptions) {
  return {
    name: 'bench-gate',
    clock: { scale: o.scale },
    timings: { podStartSeconds: 1 },
    nodes: NODES.map((name) => ({ name })),
    openstack: {
      migrationSeconds: o.migrationSeconds,
      hosts: NODES.map((name) => ({ name, maxConcurrentLiveMigrations: 1 })),
      servers: Array.from({ length: o.servers }, (_, i) => ({
        name: `vm-${i + 1}`,
        project: 'alpha',
        host: NODES[0],
      })),
    },
    kubevirt: { installed: false },
    daemonsets: [{ name: 'node-agent', namespace: 'kube-system' }],
    // ordinary pods beside the servers: drainer's own pod drain of them goes on beside the taker's
    replicasets: [
      {
        name: 'web',
        namespace: 'shop',
        replicas: o.pods,
        labels: { app: 'web' },
        nodes: [NODES[0] as string],
      },
    ],
  };
}

const gatePod = (sb: Sandbox, node: string) => sb.kube.store.find('pods', 'drainer', gateName(node));
const running = (sb: Sandbox, node: string) =>
  (gatePod(sb, node)?.status as { phase?: string } | undefined)?.phase === 'Running';
const record = (sb: Sandbox, node: string) =>
  parseRecord(sb.kube.store.find('nodes', undefined, node)?.metadata.annotations?.[STATE_ANNOTATION]);

/** A request of the drain gate: its pods and PDBs in drainer's namespace. */
const isGateRequest = (p: string): boolean =>
  p.includes('/namespaces/drainer/pods') || p.includes('/namespaces/drainer/poddisruptionbudgets');

/** A request to an agent's own Lease (one writer per node): its renewals. */
const isNodeLeaseRequest = (p: string): boolean => p.includes('/namespaces/drainer/leases/drainer-node-');

export async function gateBench(kubectl: string, o: GateOptions): Promise<GateBenchResult> {
  const sb = await startSandbox({ scenario: world(o) });
  const dir = await mkdtemp(path.join(tmpdir(), 'drainer-bench-gate-'));
  const stop = new AbortController();
  const agents = startAgents({
    nodes: NODES,
    config: demoConfig(sb.drainerConfig, {
      fleet: { maxConcurrentEvacuations: 0, agentLeaseDuration: o.agentLeaseSeconds },
    }),
    kubeconfigYaml: sb.kube.kubeconfig(),
    log: createLogger({ level: 'silent' }),
    signal: stop.signal,
  });
  try {
    const kubeconfig = path.join(dir, 'kubeconfig');
    await writeFile(kubeconfig, sb.kube.kubeconfig(), { mode: 0o600 });
    await until('agents ready and gates held', () => agents.ready() && NODES.every((n) => running(sb, n)));
    const os = sb.openstack.state;
    const rounds: GateRound[] = [];
    for (let i = 0; i < o.rounds; i++) {
      const node = NODES[i % 2] as string;
      if (os.serversOnHost(node).length !== o.servers) throw new Error(`bench gate: servers not on ${node}`);
      let lastLeft = 0;
      const unsubscribe = os.subscribe(() => {
        if (!lastLeft && os.serversOnHost(node).length === 0) lastLeft = performance.now();
      });
      const start = performance.now();
      const args = [
        '--kubeconfig',
        kubeconfig,
        'drain',
        node,
        '--ignore-daemonsets',
        '--delete-emptydir-data',
        '--force',
      ];
      const { code, output } = await run(kubectl, args, dir);
      const returned = performance.now();
      unsubscribe();
      if (code !== 0) throw new Error(`bench gate: kubectl exited ${code}: ${output.slice(-500)}`);
      // never early: a drain that returned with a server still on the host has lastLeft 0
      const lag = lastLeft ? (returned - lastLeft) / 1000 : Number.NEGATIVE_INFINITY;
      rounds.push({ node, lagS: lag, drainS: (returned - start) / 1000 });
      await setUnschedulable(sb.kube.url, node, false);
      await until(`${node} restored, gate held`, () => record(sb, node) === undefined && running(sb, node));
    }
    // idle: every node in service, every gate held; what do the gates cost while nothing happens?
    await sleep(500);
    const from = sb.clock.now();
    const t0 = performance.now();
    await sleep(o.idleMs);
    const idleHours = (performance.now() - t0) / 3_600_000;
    const idleRequests = sb.kube.requestLog.filter((r) => r.at >= from && isGateRequest(r.path)).length;
    const perNodeHour = idleRequests / idleHours / NODES.length;
    const leaseRequests = sb.kube.requestLog.filter((r) => r.at >= from && isNodeLeaseRequest(r.path)).length;
    // renewals come every half of the lease duration: at the default they are this much rarer
    const leasePerNodeHour =
      (leaseRequests / idleHours / NODES.length) * (o.agentLeaseSeconds / o.defaultAgentLeaseSeconds);
    const lags = rounds.map((r) => r.lagS);
    const worst = Math.max(...lags);
    const earliest = Math.min(...lags);
    return {
      rounds,
      idleRequests,
      idleHours,
      perNodeHour,
      leaseRequests,
      figures: [
        atMost('last server left → kubectl drain returned, worst round', round(worst, 2), 6, 's'),
        info(
          'never early (every round ≥ 0)',
          earliest >= 0 ? `yes (earliest ${round(earliest, 2)} s)` : `NO (${round(earliest, 2)} s)`,
        ),
        info('lag per round', lags.map((l) => round(l, 2)).join(', '), 's'),
        info('kubectl drain time per round', rounds.map((r) => round(r.drainS, 1)).join(', '), 's'),
        atMost('gate requests per node per hour while idle (measured)', round(perNodeHour, 2), 1),
        info(
          'gate requests per node per hour while idle (periodic, from the code)',
          `${round((2 * 3600) / GATE_WATCH_SECONDS + 1, 0)} (2 watches re-opened every ${GATE_WATCH_SECONDS / 60} min, an hourly read of whose turn it is to sweep for deleted nodes' gates; the one agent an hour whose turn it is lists the gates)`,
        ),
        atMost(
          `node Lease (one writer per node) requests per node per hour while idle, at fleet.agentLeaseDuration ${o.defaultAgentLeaseSeconds} s`,
          round(leasePerNodeHour, 1),
          120,
        ),
      ],
    };
  } finally {
    await agents.stop();
    stop.abort();
    await sb.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export function gateNotes(o: GateOptions, r: GateBenchResult, kubectl: string): string[] {
  return [
    `Scenario: ${o.servers} Nova servers and ${o.pods} ordinary pods (a ReplicaSet) on one of two hypervisor nodes, one agent per node (fleet budget off), ` +
      `migrations of ${o.migrationSeconds} simulated s, one at a time per host, clock ×${o.scale}. ` +
      `${o.rounds} rounds of \`${kubectl} drain <node> --ignore-daemonsets --delete-emptydir-data --force\`, ` +
      'each on the node that holds the servers, then an uncordon and a wait until the gate is held again.',
    "The lag is real time from the moment Nova's state shows no server on the host to kubectl's exit: kubectl " +
      'retries the gate pod eviction (429 while held) every 5 s, so up to ~5 s is its retry interval.',
    `Idle: ${round(r.idleHours * 3600, 0)} s with both nodes in service; ${r.idleRequests} requests to the gates' pods and ` +
      'PDBs in that time (the sandbox request log). While idle the gate makes only periodic requests: its two ' +
      `watches (gate pod and PDB of the node) re-open every ${GATE_WATCH_SECONDS / 60} min, and an hourly read of the Lease ` +
      "drainer-gate-sweep; one agent of the fleet an hour takes it and sweeps the deleted nodes' gates (two lists and a " +
      'GET per gate); the idle window is shorter than both periods.',
    'The gate opens the moment the plugins have moved every VM; drainer goes on with its own pod drain beside ' +
      "the taker's, so the evicted pods do not add to the lag.",
    `The node Lease: the agents ran with fleet.agentLeaseDuration ${o.agentLeaseSeconds} s (renewed every half of it), ` +
      `so the idle window holds many renewals: ${r.leaseRequests} requests to drainer-node-<node> from ${NODES.length} agents; ` +
      `the figure scales that rate to the default ${o.defaultAgentLeaseSeconds} s (renewals are periodic and nothing else ` +
      'touches that Lease while idle).',
  ];
}
