// Clients for the chosen credentials. In a Pod: the ServiceAccount over node:https (wire-pod.ts);
// with a kubeconfig: client-node's KubeConfig, imported only then, so the daemon in a Pod never
// loads client-node.
import type { KubeTarget } from '../config/kube-target.ts';
import { KubeHttp, type ApiRequestHook, type KubeClients } from './http.ts';
import { PodWire } from './wire-pod.ts';

export async function connectKube(target: KubeTarget, onApiRequest?: ApiRequestHook): Promise<KubeClients> {
  if (target.inCluster && target.server && target.serviceAccountDir)
    return new KubeHttp(
      new PodWire({ server: target.server, serviceAccountDir: target.serviceAccountDir }),
      onApiRequest,
    );
  const { createKubeClients } = await import('./client.ts');
  return createKubeClients({
    ...(target.kubeconfigPath ? { kubeconfigPath: target.kubeconfigPath } : {}),
    ...(target.inCluster ? { inCluster: true } : {}),
    ...(onApiRequest ? { onApiRequest } : {}),
  });
}
