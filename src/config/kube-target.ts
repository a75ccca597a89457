// Which Kubernetes credentials the agent uses, chosen explicitly (not by client-node's guessing):
// config.kubeconfig (or KUBECONFIG) first, else the ServiceAccount when running in a Pod
// (KUBERNETES_SERVICE_HOST is set), else ~/.kube/config.
import type { Config } from './schema.ts';

export interface KubeTarget {
  readonly kubeconfigPath?: string;
  readonly inCluster?: boolean;
  /** For the startup log line. */
  readonly source: 'kubeconfig' | 'in-cluster' | 'default kubeconfig';
}

export function kubeTarget(
  config: Pick<Config, 'kubeconfig'>,
  env: NodeJS.ProcessEnv = process.env,
): KubeTarget {
  if (config.kubeconfig) return { kubeconfigPath: config.kubeconfig, source: 'kubeconfig' };
  if (env.KUBERNETES_SERVICE_HOST) return { inCluster: true, source: 'in-cluster' };
  return { source: 'default kubeconfig' };
}
