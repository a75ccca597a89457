// What the drain gate stories share: the gate's names on node-a, its pod and the wait for it to run,
// the kubectl drain they run, and an agent on node-a with kubectl and the drainer CLI pointed at the
// stack's API server.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gateName } from '../../src/kube/gate.ts';
import type { KubePod } from '../../src/kube/types.ts';
import { cli } from '../cli/harness.ts';
import { kubectl } from '../daemonset/kubectl.ts';
import { until, type Stack } from './stack.ts';

export const GATE = gateName('node-a');
export const POD = `/api/v1/namespaces/drainer/pods/${GATE}`;
export const PDB = `/apis/policy/v1/namespaces/drainer/poddisruptionbudgets/${GATE}`;
export const DRAIN = [
  'drain',
  'node-a',
  '--ignore-daemonsets',
  '--delete-emptydir-data',
  '--force',
  '--timeout=120s',
];

/** node-a's gate pod as the API server has it, or undefined (none). */
export const gatePodOf = (s: Stack) => s.k.request<KubePod>({ path: POD }).catch(() => undefined);

/** Until node-a's gate pod runs: its agent holds the gate. */
export const gateRunning = (s: Stack, ms?: number) =>
  until('gate pod running', async () => (await gatePodOf(s))?.status?.phase === 'Running', ms);

/** Starts the agent of node-a on `s` and waits until it is ready (and, if `running`, its gate pod runs). */
export async function gateAgent(s: Stack, overrides: Record<string, unknown>, running = true) {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-gate-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
  const agent = s.startAgent('node-a', overrides);
  await until('agent ready', () => agent.agent.ready().ready);
  const gatePod = () => gatePodOf(s);
  if (running) await gateRunning(s);
  return {
    agent,
    gatePod,
    kubeconfig,
    kube: (args: string[]) => kubectl(['--kubeconfig', kubeconfig, ...args]),
    drainer: (...args: string[]) => cli({ env: { KUBECONFIG: kubeconfig } })(...args),
  };
}

/**
 * The operator takes node-a's agent off the documented way (drainer.dev/agent=disabled): the DaemonSet
 * places none there any more, and its pod goes (the agent stops as on SIGTERM).
 */
export async function takeAgentOff(s: Stack, agent: { stop(): Promise<unknown> }): Promise<void> {
  await s.k.request({
    method: 'PATCH',
    path: '/api/v1/nodes/node-a',
    contentType: 'application/merge-patch+json',
    body: { metadata: { labels: { 'drainer.dev/agent': 'disabled' } } },
  });
  await agent.stop();
}
