// Shared test plumbing: a kubeconfig for any loopback URL, a silent logger, and polling waits.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, type Logger } from '../../src/observability/logger.ts';

export const silentLog = (): Logger => createLogger({ level: 'silent' });

export function kubeconfigFor(url: string, token = 'test-token'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "' + url + '", insecure-skip-tls-verify: true}}]',
    'users: [{name: u, user: {token: "' + token + '"}}]',
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
  ].join('\n');
}

/** Polls until `check` returns a truthy value (or throws after `ms`). */
export async function until<T>(
  check: () => T | Promise<T>,
  what = 'condition',
  ms = 8000,
): Promise<NonNullable<Awaited<T>>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A bare HTTP server for behaviours the sandbox cannot show (silent streams, odd bodies). */
export async function fakeServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
