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
  /** An openrc with admin rights on a real Nova; empty for the KubeVirt cases run without one. */
  openrc: string;
  /** The nova-compute host the node maps to (the suite boots its servers there); empty without Nova. */
  novaHost: string;
  /** kubectl to drive the cluster with (the operator's tool). */
  kubectl: string;
  /** The port the agent serves /healthz, /readyz and /metrics on: with hostNetwork it must be free on the host. */
  agentPort: number;
}

/** A real KubeVirt control plane (virt-api, virt-controller) running against the cluster: DRAINER_REAL_KUBEVIRT=1. */
export interface KubeVirtEnv {
  /** The folder of KubeVirt's binaries (the same build as the running ones): virt-operator's
   *  `--dump-install-strategy` writes KubeVirt's manifests (CRDs, RBAC, webhooks, APIServices) into a ConfigMap,
   *  where the suite reads them; resource-generator's `--type=kv` prints the KubeVirt CRD. */
  bin: string;
  /** KubeVirt's namespace (where virt-api and virt-controller look for the KubeVirt CR). */
  namespace: string;
  /** ip:port where virt-api listens: its Service's ClusterIP (in the service range) and manual Endpoints; the API
   *  server dials one or the other (with or without --enable-aggregator-routing). The suite puts it inside its
   *  own network namespace (`netns`), never on the host's lo. */
  api: string;
  /** The CA of virt-api's serving certificate (the webhooks' and the APIService's caBundle). */
  apiCa: string;
  /** virt-api's serving certificate and key (the name must include `virt-api.kubevirt.svc`). */
  apiCert: string;
  apiKey: string;
  /** The network namespace the suite makes for virt-api, and removes at the end. */
  netns: string;
  /** virt-controller's https address, for its /healthz. */
  controller: string;
  /** The second Node, emulated by the suite (no kubelet): migrations' target. */
  emulatedNode: string;
}

export const REQUIRED = [
  'DRAINER_REAL_KUBECONFIG',
  'DRAINER_REAL_NODE',
  'DRAINER_REAL_OPENRC',
  'DRAINER_REAL_NOVA_HOST',
] as const;

export const KUBEVIRT_REQUIRED = [
  'DRAINER_REAL_KUBEVIRT_BIN',
  'DRAINER_REAL_KUBEVIRT_API',
  'DRAINER_REAL_KUBEVIRT_API_CA',
  'DRAINER_REAL_KUBEVIRT_API_CERT',
  'DRAINER_REAL_KUBEVIRT_API_KEY',
  'DRAINER_REAL_KUBEVIRT_CONTROLLER',
] as const;

/** The KubeVirt settings, undefined without DRAINER_REAL_KUBEVIRT=1, or an error naming what is missing. */
export function kubevirtEnv(env: Env = process.env): KubeVirtEnv | undefined {
  if (env.DRAINER_REAL_KUBEVIRT !== '1') return undefined;
  const missing = KUBEVIRT_REQUIRED.filter((k) => !env[k]);
  if (missing.length > 0)
    throw new Error(
      `DRAINER_REAL_KUBEVIRT=1 needs ${missing.join(', ')} (docs/real-cluster-tests.md, "KubeVirt")`,
    );
  return {
    bin: env.DRAINER_REAL_KUBEVIRT_BIN!,
    namespace: env.DRAINER_REAL_KUBEVIRT_NAMESPACE ?? 'kubevirt',
    api: env.DRAINER_REAL_KUBEVIRT_API!,
    apiCa: env.DRAINER_REAL_KUBEVIRT_API_CA!,
    apiCert: env.DRAINER_REAL_KUBEVIRT_API_CERT!,
    apiKey: env.DRAINER_REAL_KUBEVIRT_API_KEY!,
    netns: env.DRAINER_REAL_KUBEVIRT_NETNS ?? 'drainer-real-kv',
    controller: env.DRAINER_REAL_KUBEVIRT_CONTROLLER!,
    emulatedNode: env.DRAINER_REAL_KUBEVIRT_EMULATED_NODE ?? 'kubevirt-emulated-node',
  };
}

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
  return settings(env);
}

/**
 * The settings for the KubeVirt cases run on their own (no OpenStack up): only the cluster and the node are
 * required; without DRAINER_REAL_OPENRC drainer is installed with its Nova plugin off.
 */
export function realEnvWithoutNova(env: Env = process.env): RealEnv {
  const missing = REQUIRED.slice(0, 2).filter((k) => !env[k]);
  if (missing.length > 0)
    throw new Error(`test:real needs ${missing.join(', ')} (README "Real cluster tests")`);
  return settings(env);
}

function settings(env: Env): RealEnv {
  return {
    kubeconfig: env.DRAINER_REAL_KUBECONFIG!,
    node: env.DRAINER_REAL_NODE!,
    openrc: env.DRAINER_REAL_OPENRC ?? '',
    novaHost: env.DRAINER_REAL_NOVA_HOST ?? '',
    kubectl: env.DRAINER_REAL_KUBECTL ?? 'kubectl',
    agentPort: Number(env.DRAINER_REAL_AGENT_PORT ?? 18080),
  };
}

/** The OS_* variables an openrc exports (`export OS_X=value`, optionally quoted); nothing is executed. */
export function readOpenrc(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!file) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*(?:export\s+)?(OS_[A-Z_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!.trim().replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}
