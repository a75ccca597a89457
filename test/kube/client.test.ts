import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthError,
  ConfigError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  TransientError,
} from '../../src/errors.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { fakeServer, kubeconfigFor } from './helpers.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function serverAnswering(code: number, body: string) {
  const s = await fakeServer((_req, res) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(body);
  });
  closers.push(s.close);
  return s;
}

describe('createKubeClients', () => {
  it('maps API answers to typed errors without the token in the message', async () => {
    const cases: [number, new (...a: never[]) => Error][] = [
      [401, AuthError],
      [403, ForbiddenError],
      [404, NotFoundError],
      [409, ConflictError],
      [429, TransientError],
      [503, TransientError],
    ];
    for (const [code, cls] of cases) {
      const s = await serverAnswering(
        code,
        JSON.stringify({ kind: 'Status', code, message: `said ${code}` }),
      );
      const k = createKubeClients({ kubeconfigYaml: kubeconfigFor(s.url, 'sup3r-s3cret') });
      const err = await k.request({ path: '/api/v1/nodes/n1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(cls);
      expect((err as Error).message).toContain(`said ${code}`);
      expect((err as Error).message).not.toContain('sup3r-s3cret');
    }
  });

  it('keeps a raw-text error body as the message', async () => {
    const s = await serverAnswering(502, '<html>bad gateway</html>');
    const k = createKubeClients({ kubeconfigYaml: kubeconfigFor(s.url) });
    const err = await k.request({ path: '/api/v1/nodes' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toContain('bad gateway');
  });

  it('counts every answer and every failed connection through onApiRequest', async () => {
    const s = await serverAnswering(404, '{}');
    const seen: string[] = [];
    const k = createKubeClients({
      kubeconfigYaml: kubeconfigFor(s.url),
      onApiRequest: (api, code) => seen.push(`${api}:${code}`),
    });
    await k.request({ path: '/x' }).catch(() => undefined);
    await k.send({ path: '/y' });
    const dead = createKubeClients({
      kubeconfigYaml: kubeconfigFor('http://127.0.0.1:1'),
      onApiRequest: (api, code) => seen.push(`${api}:${code}`),
    });
    const err = await dead.request({ path: '/x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect(seen).toEqual(['kubernetes:404', 'kubernetes:404', 'kubernetes:error']);
  });

  it('tells a watch it opened from a request it sent, so a bench can count re-opened watches', async () => {
    const s = await serverAnswering(200, '{}');
    const seen: string[] = [];
    const k = createKubeClients({
      kubeconfigYaml: kubeconfigFor(s.url),
      onApiRequest: (_api, code, watch) => seen.push(`${code}:${watch ?? 'request'}`),
    });
    await k.send({ path: '/api/v1/nodes' });
    const res = await k.send(
      { path: '/api/v1/nodes', query: { watch: 'true' }, timeoutMs: 0 },
      { stream: true },
    );
    await res.stream?.cancel();
    expect(seen).toEqual(['200:request', '200:/api/v1/nodes']);
  });

  it('reuses one connection for its requests instead of opening one per request', async () => {
    const sockets = new Set<unknown>();
    const s = await fakeServer((req, res) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":"NodeList","items":[]}');
    });
    closers.push(s.close);
    const k = createKubeClients({ kubeconfigYaml: kubeconfigFor(s.url) });
    for (let i = 0; i < 10; i++) await k.request({ path: '/api/v1/nodes' });
    // one pool: undici may keep a second connection warm, but never one per request
    expect(sockets.size).toBeLessThanOrEqual(2);
  });

  it('reports a missing kubeconfig file as a ConfigError', () => {
    expect(() => createKubeClients({ kubeconfigPath: '/nonexistent/kubeconfig' })).toThrow(ConfigError);
    expect(() => createKubeClients({ homeDir: '/nonexistent-home' })).toThrow(ConfigError);
  });
});
