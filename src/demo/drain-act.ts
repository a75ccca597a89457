// `drainer demo`'s drain act: a fleet tool drains a hypervisor the way kured, Cluster API or Karpenter
// do (the real `kubectl drain` when it is on PATH, else the same Eviction-API loop, src/kube/drain.ts,
// with kubectl's 5-s retry). drainer's gate pod holds the drain while the servers move; the report
// says when the drain returned compared with when the last VM left (both read as they happened).
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { OutStream } from '../output/stream.ts';
import { drainSchema } from '../config/schema.ts';
import { createKubeClients } from '../kube/client.ts';
import { drainNode } from '../kube/drain.ts';
import type { Logger } from '../observability/logger.ts';
import { startSandbox, type Sandbox } from '../sandbox/index.ts';
import { demoConfig, startAgents, type DemoAgents } from './agents.ts';
import { FLEET_RACK, fleetScenario } from './fleet-scenario.ts';
import { cordon } from './node.ts';
import { guardingGatePod, holderText } from './gate-pod.ts';
import { pollUntil, waitReady, type WaitOptions } from './wait.ts';

export interface DrainActOptions extends WaitOptions {
  readonly out: OutStream;
  readonly log: Logger;
  readonly scale: number;
  /** The kubectl to run; false: the Eviction-API loop. */
  readonly kubectl: string | false;
}

export interface DrainActReport {
  readonly node: string;
  readonly tool: 'kubectl drain' | 'Eviction API';
  readonly servers: number;
  /** Real ms from the start of the drain. */
  readonly lastLeftMs: number | undefined;
  readonly returnedMs: number | undefined;
  /** Servers on the host when the drain returned (0, or the gate failed). */
  readonly serversAtReturn: number;
  /** Reads of the live view that found the drain held while servers were still on the host. */
  readonly heldReads: number;
  readonly ok: boolean;
}

/** The first executable `kubectl` on a PATH string (the CLI passes its environment's). */
export function kubectlOnPath(pathVar: string | undefined): string | false {
  for (const dir of (pathVar ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, 'kubectl');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return false;
}

function runKubectl(
  kubectl: string,
  kubeconfig: string,
  node: string,
  signal: AbortSignal,
): Promise<boolean> {
  const args = ['--kubeconfig', kubeconfig, 'drain', node, '--ignore-daemonsets', '--delete-emptydir-data'];
  return new Promise((resolve) => {
    const child = spawn(kubectl, [...args, '--force', '--timeout=300s'], { stdio: 'ignore', signal });
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}

/** kubectl drain's loop without kubectl: cordon, then evict every pod, a 429 retried every 5 s. */
async function evictionLoop(sb: Sandbox, node: string, log: Logger, signal: AbortSignal): Promise<boolean> {
  await cordon(sb, node, true);
  const k = createKubeClients({ kubeconfigYaml: sb.kube.kubeconfig() });
  const config = drainSchema.parse({ timeout: 300, evictionRetryInterval: 5 });
  const result = await drainNode(k, { node, config, signal, log });
  return result.succeeded;
}

export async function runDrainAct(o: DrainActOptions): Promise<DrainActReport> {
  const say = (line: string) => o.out.write(`${line}\n`);
  const sb = await startSandbox({ scenario: fleetScenario, scale: o.scale, log: o.log });
  const node = FLEET_RACK[0];
  const os = sb.openstack.state;
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-demo-drain-'));
  let agents: DemoAgents | undefined;
  try {
    agents = startAgents({
      nodes: sb.scenario.nodes.map((n) => n.name),
      config: demoConfig(sb.drainerConfig),
      kubeconfigYaml: sb.kube.kubeconfig(),
      log: o.log.child({ sandbox: 'drain' }),
      signal: o.signal,
    });
    await waitReady(agents, o);
    const gate = () => guardingGatePod(node, sb.kube.store.list('pods', { namespace: 'drainer' }));
    await pollUntil(
      o,
      () => (gate()?.status as { phase?: string } | undefined)?.phase,
      (p) => p === 'Running',
    );
    const servers = os.serversOnHost(node).length;
    const tool = o.kubectl ? 'kubectl drain' : 'Eviction API';
    say(
      `\nDrain: ${o.kubectl ? `kubectl drain ${node} --ignore-daemonsets --delete-emptydir-data --force` : `kubectl is not on PATH: the same Eviction-API loop drains ${node}`}` +
        `   (${servers} Nova servers; drainer's gate pod drainer/${gate()?.metadata.name ?? '?'} holds the drain until they have left)`,
    );
    const start = Date.now();
    let lastLeftMs: number | undefined;
    const unsubscribe = os.subscribe(() => {
      if (lastLeftMs === undefined && os.serversOnHost(node).length === 0) lastLeftMs = Date.now() - start;
    });
    let returnedMs: number | undefined;
    let serversAtReturn = -1;
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, sb.kube.kubeconfig(), { mode: 0o600 });
    // the act's time is up (or Ctrl-C): the drain stops too
    const stop = new AbortController();
    const signal = AbortSignal.any([stop.signal, o.signal]);
    const drain = o.kubectl
      ? runKubectl(o.kubectl, kubeconfig, node, signal)
      : evictionLoop(sb, node, o.log, signal);
    const drained = drain
      .catch(() => false)
      .then((ok) => {
        returnedMs = Date.now() - start;
        serversAtReturn = os.serversOnHost(node).length;
        return ok;
      });
    let heldReads = 0;
    let shown = '';
    await pollUntil(
      o,
      () => returnedMs,
      (returned) => {
        const left = os.serversOnHost(node).length;
        const holder = gate();
        if (returned === undefined && left > 0 && holder) heldReads++;
        const line =
          returned !== undefined
            ? `drain returned: ${left} servers on ${node}`
            : holder
              ? `drain held by ${holderText(node, holder)}: ${left} of ${servers} servers still on ${node}`
              : `gate released: ${tool} finishing`;
        // the return is stamped when it happened, as the summary says it, not when this read saw it
        const at = returned ?? Date.now() - start;
        if (line !== shown) say(`  [${(at / 1000).toFixed(1)} s] ${line}`);
        shown = line;
        return returned !== undefined;
      },
    );
    if (returnedMs === undefined) stop.abort();
    const ok = await drained;
    unsubscribe();
    return {
      node,
      tool,
      servers,
      lastLeftMs,
      returnedMs,
      serversAtReturn,
      heldReads,
      ok:
        ok &&
        serversAtReturn === 0 &&
        lastLeftMs !== undefined &&
        returnedMs !== undefined &&
        returnedMs >= lastLeftMs,
    };
  } finally {
    await agents?.stop();
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sec = (ms: number | undefined) => (ms === undefined ? '?' : `${(ms / 1000).toFixed(1)} s`);

export function renderDrainSummary(r: DrainActReport): string {
  const lag =
    r.lastLeftMs !== undefined && r.returnedMs !== undefined
      ? `${((r.returnedMs - r.lastLeftMs) / 1000).toFixed(1)} s after the last VM left`
      : 'before every VM had left';
  return (
    `${r.tool} of ${r.node}: the last of its ${r.servers} VMs left at ${sec(r.lastLeftMs)}, ` +
    `the drain returned at ${sec(r.returnedMs)} (${lag}; real time, kubectl retries every 5 s) ` +
    `with ${r.serversAtReturn} VMs on the node\n`
  );
}
