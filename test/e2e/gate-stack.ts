// What the drain gate stories (gate.test.ts, gate-heal.test.ts) share: the gate's names on node-a,
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

/** Starts the agent of node-a on `s` and waits until it is ready (and, if `running`, its gate pod runs). */
export async function gateAgent(s: Stack, overrides: Record<string, unknown>, running = true) {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-gate-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
  const agent = s.startAgent('node-a', overrides);
  await until('agent ready', () => agent.agent.ready().ready);
  const gatePod = () => s.k.request<KubePod>({ path: POD }).catch(() => undefined);
  if (running) await until('gate pod running', async () => (await gatePod())?.status?.phase === 'Running');
  return {
    agent,
    gatePod,
    kubeconfig,
    kube: (args: string[]) => kubectl(['--kubeconfig', kubeconfig, ...args]),
    drainer: (...args: string[]) => cli({ env: { KUBECONFIG: kubeconfig } })(...args),
  };
}
