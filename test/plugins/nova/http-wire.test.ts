// The OpenStack HTTP layer on real loopback sockets: TLS verified against the configured CA (or
// refused without it), client certificates off unless configured, the per-request timeout, and the
// query string built from searchParams.
import { createServer as createHttps, type Server } from 'node:https';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, TransientError } from '../../../src/errors.ts';
import { createHttp as createOpenStackHttp } from '../../../src/plugins/nova/http.ts';
import { selfSignedCert } from '../../../src/sandbox/kube/tls.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function listen(server: Server | ReturnType<typeof createHttp>, scheme: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function tlsServer(handler: Handler): Promise<{ url: string; caFile: string }> {
  const { key, cert } = await selfSignedCert('127.0.0.1');
  const dir = await mkdtemp(join(tmpdir(), 'drainer-os-tls-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, cert);
  return { url: await listen(createHttps({ key, cert }, handler), 'https'), caFile };
}

const echo: Handler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ method: req.method, url: req.url, ua: req.headers['user-agent'] }));
};

const noSleep = () => Promise.resolve();

describe('OpenStack http layer on real sockets', () => {
  it('verifies the server against the configured CA and sends the query from searchParams', async () => {
    const { url, caFile } = await tlsServer(echo);
    const http = createOpenStackHttp({ timeoutMs: 5000, tls: { cacert: caFile }, sleep: noSleep });
    const res = await http.request({
      api: 'nova',
      method: 'GET',
      url: `${url}/servers/detail?dropped=1`,
      searchParams: { host: 'compute a', limit: 10 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      method: 'GET',
      url: '/servers/detail?host=compute+a&limit=10',
      ua: 'drainer',
    });
  });

  it('refuses a server its CA did not sign, unless told to skip verification', async () => {
    const { url } = await tlsServer(echo);
    const codes: string[] = [];
    const strict = createOpenStackHttp({
      timeoutMs: 5000,
      sleep: noSleep,
      onApiRequest: (_a, c) => codes.push(c),
    });
    const err = await strict.request({ api: 'keystone', method: 'GET', url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).not.toBeInstanceOf(TransientError); // a certificate problem is not retried
    expect(codes).toEqual(['DEPTH_ZERO_SELF_SIGNED_CERT']);

    const insecure = createOpenStackHttp({ timeoutMs: 5000, tls: { insecure: true }, sleep: noSleep });
    await expect(insecure.request({ api: 'keystone', method: 'GET', url })).resolves.toMatchObject({
      status: 200,
    });
  });

  it('sends JSON bodies and gives up on a silent server after the timeout, retrying it', async () => {
    let posted = '';
    let calls = 0;
    const url = await listen(
      createHttp((req, res) => {
        calls++;
        if (req.method === 'GET') return; // never answers
        req.on('data', (c: Buffer) => (posted += c.toString()));
        req.on('end', () => res.writeHead(202).end());
      }),
      'http',
    );
    const codes: string[] = [];
    const http = createOpenStackHttp({
      timeoutMs: 100,
      retries: 1,
      sleep: noSleep,
      onApiRequest: (_a, c) => codes.push(c),
    });
    await http.request({ api: 'nova', method: 'POST', url: `${url}/action`, json: { a: 1 } });
    expect(posted).toBe('{"a":1}');
    const err = await http
      .request({ api: 'nova', method: 'GET', url: `${url}/slow` })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect(codes).toEqual(['202', 'ETIMEDOUT', 'ETIMEDOUT']);
    expect(calls).toBe(3);
  });
});

describe('a request that waits', () => {
  it('says what it waits for once the answer is late, then gives up in one line with a hint', async () => {
    const url = await listen(
      createHttp(() => {}), // accepts, never answers
      'http',
    );
    const said: string[] = [];
    const ac = new AbortController();
    const http = createOpenStackHttp({
      timeoutMs: 60_000,
      slowMs: 20,
      retries: 0,
      onSlow: (text) => {
        said.push(text);
        ac.abort(new Error('seen'));
      },
    });
    await expect(
      http.request({ api: 'keystone', method: 'POST', url: `${url}/v3/auth/tokens`, signal: ac.signal }),
    ).rejects.toThrow('seen');
    expect(said).toEqual([
      `waiting for keystone POST ${url}/v3/auth/tokens: no answer for 20 ms (gives up after 60 s; attempt 1 of 1)`,
    ]);
  });

  it('words a refused connection as a cause and a hint', async () => {
    const url = await listen(
      createHttp(() => {}),
      'http',
    );
    await new Promise<void>((r) =>
      cleanups
        .pop()?.()
        .then(() => r()),
    );
    const http = createOpenStackHttp({ timeoutMs: 5000, retries: 0 });
    await expect(http.request({ api: 'keystone', method: 'GET', url: `${url}/v3` })).rejects.toThrow(
      `keystone GET ${url}/v3: connection refused (hint: is openstack.auth.authUrl (the catalog gives the rest) right and the service up?)`,
    );
  });
});
