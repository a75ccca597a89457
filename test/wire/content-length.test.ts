// Every HTTP path drainer talks over, read byte by byte as Go's net/http server (kube-apiserver,
// and the OpenStack and Prometheus fronts alike) would read it. Node's http client sends no
// Content-Length for a DELETE or GET body unless told: the server then reads no body, and the body's
// bytes become the start of the next request on the keep-alive connection, answered 400.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeWire } from '../../src/kube/wire-pod.ts';
import { KubeconfigWire } from '../../src/kube/wire-kubeconfig.ts';
import { firingAlerts } from '../../src/core/fleet/prometheus.ts';
import { KubeHttp, type HttpVerb, type KubeWire } from '../../src/kube/http.ts';
import { createHttp } from '../../src/plugins/nova/http.ts';
import { startGoServer, type GoServer } from './go-server.ts';

const METHODS: readonly HttpVerb[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const BODY = JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 });

let go: GoServer;
const closers: (() => void)[] = [];
beforeEach(async () => {
  go = await startGoServer();
});
afterEach(async () => {
  for (const c of closers.splice(0)) c();
  await go.close();
});

const why = () => `the bytes on the wire:\n${go.raw.join('\n---\n')}`;

/** A request with a body, then one without on the same keep-alive connection, as the agent does. */
async function bodyThenNext(wire: KubeWire, method: HttpVerb): Promise<number> {
  const headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
  const first = await wire.send({ method, pathAndQuery: '/api/v1/first', headers, body: BODY });
  await first.text();
  const next = await wire.send({ method: 'GET', pathAndQuery: '/api/v1/next', headers: {} });
  await next.text();
  return next.status;
}

function nodeWire(): NodeWire {
  const wire = new NodeWire({ server: go.url });
  closers.push(() => wire.close());
  return wire;
}

function kubeconfigWire(): KubeconfigWire {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: go.url, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeconfigWire(kc);
}

describe('the Pod and simple-kubeconfig wire (node:http)', () => {
  it.each(METHODS)('sends a %s body the server reads, and the next request stays whole', async (method) => {
    const status = await bodyThenNext(nodeWire(), method);

    expect(go.rejected, why()).toEqual([]);
    expect(
      go.requests.map((r) => `${r.method} ${r.target} ${r.body}`),
      why(),
    ).toEqual([`${method} /api/v1/first ${BODY}`, 'GET /api/v1/next ']);
    expect(go.requests[0]?.headers['content-length'], why()).toBe(String(BODY.length));
    expect(status).toBe(200);
  });
});

describe('the kubeconfig wire (client-node, undici)', () => {
  it.each(METHODS.filter((m) => m !== 'GET'))(
    'sends a %s body the server reads, and the next request stays whole',
    async (method) => {
      const status = await bodyThenNext(kubeconfigWire(), method);

      expect(go.rejected, why()).toEqual([]);
      expect(
        go.requests.map((r) => `${r.method} ${r.target} ${r.body}`),
        why(),
      ).toEqual([`${method} /api/v1/first ${BODY}`, 'GET /api/v1/next ']);
      expect(status).toBe(200);
    },
  );

  it('refuses a GET body before sending a byte (fetch forbids it), so no connection is corrupted', async () => {
    await expect(bodyThenNext(kubeconfigWire(), 'GET')).rejects.toThrow(/GET\/HEAD method cannot have body/);
    expect(go.raw.join(''), why()).toBe('');
  });
});

describe('the OpenStack client (node:http, a fresh connection per request)', () => {
  it.each(['POST', 'PUT', 'DELETE'] as const)('sends a %s body with its length', async (method) => {
    const http = createHttp({ timeoutMs: 5000, retries: 0 });
    const res = await http.request({ api: 'nova', method, url: `${go.url}/v2.1/x`, json: { a: 1 } });

    expect(res.status).toBe(200);
    expect(
      go.requests.map((r) => [r.method, r.body]),
      why(),
    ).toEqual([[method, '{"a":1}']]);
    expect(go.requests[0]?.headers['content-length'], why()).toBe('7');
  });
});

describe('the paths above the wires', () => {
  it("KubeHttp's DELETE with DeleteOptions, then an Event, over the Pod wire: both read whole", async () => {
    const k = new KubeHttp(nodeWire());
    const options = { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 };
    await k.request({ method: 'DELETE', path: '/api/v1/namespaces/d/pods/p', body: options });
    await k.request({ method: 'POST', path: '/api/v1/namespaces/default/events', body: { reason: 'X' } });

    expect(go.rejected, why()).toEqual([]);
    expect(
      go.requests.map((r) => [r.method, JSON.parse(r.body) as unknown]),
      why(),
    ).toEqual([
      ['DELETE', options],
      ['POST', { reason: 'X' }],
    ]);
  });

  it("the Prometheus blocker's GET carries no body", async () => {
    // this server answers {} (no data.alerts), which the blocker reports: only the bytes matter here
    await expect(
      firingAlerts(
        { url: go.url, alertName: '.*', labels: {}, requestTimeout: 5 },
        AbortSignal.timeout(5000),
      ),
    ).rejects.toThrow(/without data\.alerts/);
    expect(go.rejected, why()).toEqual([]);
    expect(
      go.requests.map((r) => [r.method, r.target, r.body]),
      why(),
    ).toEqual([['GET', '/api/v1/alerts', '']]);
  });
});
