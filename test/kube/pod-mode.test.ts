// Pod mode: the daemon's clients from the ServiceAccount mount (a temp dir stands in for it) against
// the sandbox's API server over TLS: the mounted CA is the only trust, the token file is read again
// as the kubelet rotates it, and client-node is not involved.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeTarget } from '../../src/config/kube-target.ts';
import { ConfigError, TransientError } from '../../src/errors.ts';
import { connectKube } from '../../src/kube/connect.ts';
import { KubeHttp } from '../../src/kube/http.ts';
import type { KubeList, KubeObject } from '../../src/kube/types.ts';
import { runWatch } from '../../src/kube/watch.ts';
import { PodWire } from '../../src/kube/wire-pod.ts';
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { selfSignedCert } from '../../src/sandbox/kube/tls.ts';
import { silentLog, until } from './helpers.ts';
import { node } from './sandbox.ts';

let api: KubeApiServer;
let sa: string;
const wires: PodWire[] = [];

beforeEach(async () => {
  api = await startKubeApiServer({ host: '127.0.0.1', port: 0, tls: true, token: 'token-1' });
  sa = await mkdtemp(join(tmpdir(), 'drainer-sa-'));
  await writeFile(join(sa, 'ca.crt'), api.caCert ?? '');
  await writeFile(join(sa, 'token'), 'token-1\n');
});
afterEach(async () => {
  for (const w of wires.splice(0)) w.close();
  await api.close();
  await rm(sa, { recursive: true, force: true });
});

function podClients(o: { now?: () => number } = {}) {
  const wire = new PodWire({ server: api.url, serviceAccountDir: sa, ...o });
  wires.push(wire);
  const codes: string[] = [];
  return { k: new KubeHttp(wire, (_api, code) => codes.push(code)), codes };
}

const statuses = () => api.requestLog.map((r) => r.status);

describe('Kubernetes clients in a Pod (ServiceAccount token and CA)', () => {
  it('lists and watches with the mounted token, verifying the server with the mounted CA', async () => {
    api.store.create('nodes', node('n1'));
    const { k, codes } = podClients();
    const list = await k.request<KubeList<KubeObject>>({ path: '/api/v1/nodes' });
    expect(list.items.map((n) => n.metadata.name)).toEqual(['n1']);

    const stop = new AbortController();
    const seen: string[] = [];
    const running = runWatch({
      k,
      path: '/api/v1/nodes',
      onEvent: (type, obj) => seen.push(`${type} ${obj.metadata.name}`),
      signal: stop.signal,
      log: silentLog(),
    });
    await until(() => seen.includes('ADDED n1'), 'the listed node');
    await until(() => api.requestLog.some((r) => r.path.includes('watch=')), 'the watch');
    api.store.create('nodes', node('n2'));
    await until(() => seen.includes('ADDED n2'), 'the watched node');
    stop.abort();
    await running;
    expect(codes.every((c) => c === '200')).toBe(true);
  });

  it('goes through connectKube when the target is in-cluster', async () => {
    const port = new URL(api.url).port;
    const target = kubeTarget(
      {},
      { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port },
      sa,
    );
    const k = await connectKube(target);
    await expect(k.request({ path: '/api/v1/nodes' })).resolves.toMatchObject({ kind: 'NodeList' });
  });

  it('reads the token file again after a 401: the kubelet rotated it', async () => {
    const { k } = podClients();
    await k.request({ path: '/api/v1/nodes' });
    await writeFile(join(sa, 'token'), 'token-2\n');
    api.setToken('token-2');
    await expect(k.request({ path: '/api/v1/nodes' })).resolves.toMatchObject({ kind: 'NodeList' });
    // the old token was refused once, the new one accepted at once
    expect(statuses()).toEqual([200, 401, 200]);
  });

  it('uses the read token for a minute, then reads the file again without waiting for a 401', async () => {
    let now = 0;
    const { k } = podClients({ now: () => now });
    await k.request({ path: '/api/v1/nodes' });
    // the file changes but the server still takes only token-1: what is sent tells which was used
    await writeFile(join(sa, 'token'), 'token-2\n');
    now = 59_000;
    await k.request({ path: '/api/v1/nodes' });
    now = 61_000;
    await expect(k.request({ path: '/api/v1/nodes' })).rejects.toMatchObject({ status: 401 });
    expect(statuses()).toEqual([200, 200, 401]);
  });

  it('keeps a 401 when the token file did not change (a revoked token)', async () => {
    const { k } = podClients();
    api.setToken('someone-else');
    await expect(k.request({ path: '/api/v1/nodes' })).rejects.toMatchObject({ status: 401 });
    expect(statuses()).toEqual([401]);
  });

  it('refuses a server its CA did not sign, without sending the token', async () => {
    const other = await selfSignedCert('127.0.0.1');
    await writeFile(join(sa, 'ca.crt'), other.cert);
    const { k, codes } = podClients();
    const err = await k.request({ path: '/api/v1/nodes' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toMatch(
      /TLS failed: \S*(CERT|SIGNATURE)\S* \(hint: is it an https endpoint\? a private CA goes in /,
    );
    expect(codes).toEqual(['error']);
    expect(api.requestLog).toHaveLength(0);
  });

  it('names the missing mount as a configuration error', async () => {
    await rm(join(sa, 'ca.crt'));
    expect(() => podClients()).toThrow(ConfigError);
    await writeFile(join(sa, 'ca.crt'), api.caCert ?? '');
    await rm(join(sa, 'token'));
    const err = await podClients()
      .k.request({ path: '/api/v1/nodes' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(join(sa, 'token'));
  });
});
