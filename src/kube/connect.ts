// Clients for the chosen credentials. In a Pod: the ServiceAccount over node:https (wire-pod.ts);
// with a kubeconfig: client-node's KubeConfig, imported only then, so the daemon in a Pod never
// loads client-node.
import type { KubeTarget } from '../config/kube-target.ts';
import { ConfigError } from '../core/errors.ts';
import { KubeHttp, type ApiRequestHook, type KubeClients } from './http.ts';
import { PodWire } from './wire-pod.ts';

export async function connectKube(target: KubeTarget, onApiRequest?: ApiRequestHook): Promise<KubeClients> {
  if (target.inCluster && target.server && target.serviceAccountDir)
    return new KubeHttp(
      new PodWire({ server: target.server, serviceAccountDir: target.serviceAccountDir }),
      onApiRequest,
    );
  // client-node's fetch (undici) parses HTTP with WebAssembly, which node --jitless turns off
  if ((globalThis as { WebAssembly?: unknown }).WebAssembly === undefined)
    throw new ConfigError([
      {
        path: 'kubeconfig',
        message:
          'a kubeconfig needs WebAssembly: remove --jitless from NODE_OPTIONS (only pod mode runs without it)',
      },
    ]);
  const { createKubeClients } = await import('./client.ts');
  return createKubeClients({
    ...(target.kubeconfigPath ? { kubeconfigPath: target.kubeconfigPath } : {}),
    ...(target.inCluster ? { inCluster: true } : {}),
    ...(onApiRequest ? { onApiRequest } : {}),
  });
}
