// Starts the project's sandbox API server on loopback with clients pointed at it.
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';

export interface KubeFixture {
  readonly server: KubeApiServer;
  readonly k: KubeClients;
  readonly codes: string[];
  close(): Promise<void>;
}

export async function startFixture(): Promise<KubeFixture> {
  const server = await startKubeApiServer({ host: '127.0.0.1', port: 0 });
  const codes: string[] = [];
  const k = createKubeClients({
    kubeconfigYaml: server.kubeconfig(),
    onApiRequest: (_api, code) => codes.push(code),
  });
  return { server, k, codes, close: () => server.close() };
}

export const node = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: {},
  ...extra,
});
