// A simple kubeconfig (token or client certificate) is served without client-node; anything that
// needs client-node (exec plugins, OIDC, several files) is left to it. Against the sandbox's TLS API.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TransientError } from '../../src/errors.ts';
import { connectKube } from '../../src/kube/connect.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import { liteKubeconfig, liteKubeconfigWire } from '../../src/kube/kubeconfig-lite.ts';
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { selfSignedCert } from '../../src/sandbox/kube/tls.ts';

let api: KubeApiServer;
let dir: string;
beforeEach(async () => {
  api = await startKubeApiServer({ host: '127.0.0.1', port: 0, tls: true, token: 'kc-token' });
  dir = await mkdtemp(join(tmpdir(), 'drainer-kc-'));
});
afterEach(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
}

async function file(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

describe('kubeconfig without client-node', () => {
  it('serves a token user with the CA from a file next to the kubeconfig', async () => {
    await file('ca.pem', api.caCert ?? '');
    const path = await file(
      'config',
      kubeconfig({ server: api.url, 'certificate-authority': 'ca.pem' }, { token: 'kc-token' }),
    );
    const wire = liteKubeconfigWire(path);
    expect(wire).toBeDefined();
    const k = new KubeHttp(wire!);
    await expect(k.request({ path: '/api/v1/nodes' })).resolves.toMatchObject({ kind: 'NodeList' });
    wire?.close();
  });

  it('reads a tokenFile and the inline CA; connectKube takes this path', async () => {
    await file('token', 'kc-token\n');
    const path = await file('config', api.kubeconfig().replace('token: kc-token', 'tokenFile: token'));
    expect(
      liteKubeconfig(await import('node:fs').then((f) => f.readFileSync(path, 'utf8')), path),
    ).toBeDefined();
    const k = await connectKube({ kubeconfigPath: path, source: 'kubeconfig' });
    await expect(k.request({ path: '/api/v1/nodes' })).resolves.toMatchObject({ kind: 'NodeList' });
  });

  it('refuses a server the kubeconfig CA did not sign', async () => {
    const other = await selfSignedCert('127.0.0.1');
    const ca = Buffer.from(other.cert).toString('base64');
    const path = await file(
      'config',
      kubeconfig({ server: api.url, 'certificate-authority-data': ca }, { token: 'kc-token' }),
    );
    const err = await new KubeHttp(liteKubeconfigWire(path)!)
      .request({ path: '/api/v1/nodes' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect(api.requestLog).toHaveLength(0);
  });

  it('leaves exec plugins, auth providers, impersonation and proxies to client-node', () => {
    const server = { server: 'https://k.test' };
    const cases = [
      kubeconfig(server, { exec: { command: 'aws', apiVersion: 'client.authentication.k8s.io/v1' } }),
      kubeconfig(server, { 'auth-provider': { name: 'oidc' } }),
      kubeconfig(server, { username: 'a', password: 'b' }),
      kubeconfig({ ...server, 'proxy-url': 'http://proxy:3128' }, { token: 't' }),
      dump({ contexts: [], 'current-context': 'none' }),
    ];
    for (const text of cases) expect(liteKubeconfig(text, '/k/config')).toBeUndefined();
    expect(liteKubeconfig(kubeconfig(server, { token: 't' }), '/k/config')).toMatchObject({
      server: 'https://k.test',
    });
  });
});
