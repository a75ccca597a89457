// /healthz (the process answers), /readyz (the agent is synced and able to act; 503 with reasons
// otherwise), /metrics (Prometheus text). Plain node:http: three routes need no framework.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { http } from '../node-http.ts';
import type { Metrics } from './metrics.ts';

export type Readiness = boolean | { ready: boolean; reasons: string[] };

export interface HealthServerOptions {
  port: number;
  host: string;
  metrics?: Metrics;
  ready: () => Readiness;
  /** Aborting closes the server. */
  signal?: AbortSignal;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

async function route(req: IncomingMessage, res: ServerResponse, opts: HealthServerOptions): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'text/plain', 'method not allowed\n');
    return;
  }
  if (path === '/healthz') {
    send(res, 200, 'text/plain', 'ok\n');
  } else if (path === '/readyz') {
    const r = opts.ready();
    const { ready, reasons } = typeof r === 'boolean' ? { ready: r, reasons: r ? [] : ['not ready'] } : r;
    send(res, ready ? 200 : 503, 'application/json', `${JSON.stringify({ ready, reasons })}\n`);
  } else if (path === '/metrics' && opts.metrics) {
    send(res, 200, opts.metrics.contentType, await opts.metrics.text());
  } else {
    send(res, 404, 'text/plain', 'not found\n');
  }
}

export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    route(req, res, opts).catch(() => {
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      opts.signal?.removeEventListener('abort', onAbort);
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  const onAbort = () => void close();
  if (opts.signal?.aborted) await close();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  return { port: (server.address() as AddressInfo | null)?.port ?? opts.port, close };
}
