// What the real suite runs against, from the environment (README "Real cluster tests"). Like
// test/functional/support/cloud-env.ts, independent of src/config: the harness must not share the code
// under test's mistakes.
import { readFileSync } from 'node:fs';

type Env = Readonly<Record<string, string | undefined>>;

export interface RealEnv {
  /** Admin kubeconfig of the real cluster. */
  kubeconfig: string;
  /** The node the agent runs on; its containerd holds the image the manifests name. */
  node: string;
  /** An openrc with admin rights on a real Nova. */
  openrc: string;
  /** The nova-compute host the node maps to (the suite boots its servers there). */
  novaHost: string;
  /** kubectl to drive the cluster with (the operator's tool). */
  kubectl: string;
  /** The port the agent serves /healthz, /readyz and /metrics on: with hostNetwork it must be free on the host. */
  agentPort: number;
}

export const REQUIRED = [
  'DRAINER_REAL_KUBECONFIG',
  'DRAINER_REAL_NODE',
  'DRAINER_REAL_OPENRC',
  'DRAINER_REAL_NOVA_HOST',
] as const;

/** The one line `npm run test:real` prints when it skips, or undefined when the suite can run. */
export function skipReason(env: Env): string | undefined {
  if (!env.DRAINER_REAL_KUBECONFIG)
    return 'test:real skipped: DRAINER_REAL_KUBECONFIG is not set (a real cluster; README "Real cluster tests")';
  return undefined;
}

/** The settings, or an error naming every variable that is missing. */
export function realEnv(env: Env = process.env): RealEnv {
  const missing = REQUIRED.filter((k) => !env[k]);
  if (missing.length > 0)
    throw new Error(`test:real needs ${missing.join(', ')} (README "Real cluster tests")`);
  return {
    kubeconfig: env.DRAINER_REAL_KUBECONFIG!,
    node: env.DRAINER_REAL_NODE!,
    openrc: env.DRAINER_REAL_OPENRC!,
    novaHost: env.DRAINER_REAL_NOVA_HOST!,
    kubectl: env.DRAINER_REAL_KUBECTL ?? 'kubectl',
    agentPort: Number(env.DRAINER_REAL_AGENT_PORT ?? 18080),
  };
}

/** The OS_* variables an openrc exports (`export OS_X=value`, optionally quoted); nothing is executed. */
export function readOpenrc(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*(?:export\s+)?(OS_[A-Z_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!.trim().replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}
