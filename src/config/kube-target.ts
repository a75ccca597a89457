// Which Kubernetes credentials the agent uses, chosen explicitly (not by client-node's guessing):
// config.kubeconfig (or KUBECONFIG) first, else the ServiceAccount when running in a Pod
// (KUBERNETES_SERVICE_HOST is set), else ~/.kube/config.
import type { Config } from './schema.ts';

/** Where the kubelet mounts the Pod's ServiceAccount token and the cluster CA. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeTarget {
  readonly kubeconfigPath?: string;
  /** The kubeconfig's context to use (--context); default its current-context. */
  readonly context?: string;
  readonly inCluster?: boolean;
  /** In a Pod: the API server (https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT). */
  readonly server?: string;
  /** In a Pod: the ServiceAccount mount (token, ca.crt). */
  readonly serviceAccountDir?: string;
  /** For the startup log line. */
  readonly source: 'kubeconfig' | 'in-cluster' | 'default kubeconfig';
}

export function kubeTarget(
  config: Pick<Config, 'kubeconfig'> & Partial<Pick<Config, 'kubeContext'>>,
  env: NodeJS.ProcessEnv = process.env,
  // a seam for the footprint bench, which runs the daemon in pod mode outside a Pod
  serviceAccountDir = env.DRAINER_TEST_SERVICE_ACCOUNT_DIR || SERVICE_ACCOUNT_DIR,
): KubeTarget {
  const context = config.kubeContext ? { context: config.kubeContext } : {};
  if (config.kubeconfig) return { kubeconfigPath: config.kubeconfig, ...context, source: 'kubeconfig' };
  const host = env.KUBERNETES_SERVICE_HOST;
  if (host) {
    const h = host.includes(':') ? `[${host}]` : host; // an IPv6 service address
    const port = env.KUBERNETES_SERVICE_PORT || '443';
    return { inCluster: true, server: `https://${h}:${port}`, serviceAccountDir, source: 'in-cluster' };
  }
  return { ...context, source: 'default kubeconfig' };
}
