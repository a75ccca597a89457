// The client-node options for a chosen credential source: the one mapping that connect.ts, run-once
// and status share. Its own module so the daemon's bundle can use it without loading client-node.
import type { KubeTarget } from '../config/kube-target.ts';
import type { KubeClientOptions } from './client.ts';

export const targetOptions = (target: KubeTarget): KubeClientOptions => ({
  ...(target.kubeconfigPath ? { kubeconfigPath: target.kubeconfigPath } : {}),
  ...(target.inCluster ? { inCluster: true } : {}),
  ...(target.context && !target.inCluster ? { context: target.context } : {}),
});
