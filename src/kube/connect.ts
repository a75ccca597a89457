// Clients for the chosen credentials, without client-node where drainer can do it alone: in a Pod
// the ServiceAccount (wire-pod.ts), and a single kubeconfig file with a token or client certificate
// (kubeconfig-lite.ts). Exec plugins, OIDC and the like go through client-node's KubeConfig,
// imported only then.
import { delimiter } from 'node:path';
import type { KubeTarget } from '../config/kube-target.ts';
import { ConfigError } from '../errors.ts';
import { KubeHttp, type ApiRequestHook, type KubeClients, type KubeWire } from './http.ts';
import { liteKubeconfigWire } from './kubeconfig-lite.ts';
import { targetOptions } from './target-options.ts';
import { PodWire } from './wire-pod.ts';

function liteWire(target: KubeTarget): KubeWire | undefined {
  if (target.inCluster && target.server && target.serviceAccountDir)
    return new PodWire({ server: target.server, serviceAccountDir: target.serviceAccountDir });
  const file = target.kubeconfigPath;
  // a context other than the current one: client-node's KubeConfig chooses it
  if (file && !file.includes(delimiter) && !target.context) return liteKubeconfigWire(file);
  return undefined;
}

export async function connectKube(target: KubeTarget, onApiRequest?: ApiRequestHook): Promise<KubeClients> {
  const wire = liteWire(target);
  if (wire) return new KubeHttp(wire, onApiRequest);
  // client-node's fetch (undici) parses HTTP with WebAssembly, which node --jitless turns off
  if ((globalThis as { WebAssembly?: unknown }).WebAssembly === undefined)
    throw new ConfigError([
      {
        path: 'kubeconfig',
        message: 'this kubeconfig needs client-node, hence WebAssembly: remove --jitless from NODE_OPTIONS',
      },
    ]);
  const { createKubeClients } = await import('./client.ts');
  return createKubeClients({ ...targetOptions(target), ...(onApiRequest ? { onApiRequest } : {}) });
}
