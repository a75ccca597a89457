// The Prometheus blocker behind basic auth: the README promises that credentials in
// `fleet.blockers.prometheus.url` are used. They go as a Basic Authorization header (never in the
// request line), and no error, log line or printed config shows the password.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redactConfig } from '../../src/config/redact.ts';
import { firingAlerts } from '../../src/core/fleet/prometheus.ts';
import { createLogger } from '../../src/observability/logger.ts';

const PASSWORD = 's3cr:t@pass';
const USER = 'drainer';
const firing = {
  status: 'success',
  data: { alerts: [{ labels: { alertname: 'CephHealthWarning' }, state: 'firing' }] },
};

let server: Server;
let seen: { url: string; headers: IncomingHttpHeaders }[];
let base: string;
let wantAuth: string | undefined;

beforeEach(async () => {
  seen = [];
  wantAuth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    if (req.headers.authorization !== wantAuth) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="prometheus"' }).end('Unauthorized');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(firing));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await new Promise((r) => server.close(r));
});

const withCredentials = () =>
  `http://${encodeURIComponent(USER)}:${encodeURIComponent(PASSWORD)}@${base}/prom/`;
const ask = (url: string) =>
  firingAlerts({ url, alertName: 'Ceph.*', labels: {}, requestTimeout: 5 }, AbortSignal.timeout(5000));

describe('the Prometheus blocker with credentials in its URL', () => {
  it('sends them as Basic auth (decoded), and sees the alert that fires', async () => {
    expect(await ask(withCredentials())).toEqual(['CephHealthWarning']);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe('/prom/api/v1/alerts');
    expect(seen[0]?.headers.authorization).toBe(wantAuth);
  });

  it('sends no Authorization without credentials', async () => {
    wantAuth = undefined;
    expect(await ask(`http://${base}`)).toEqual(['CephHealthWarning']);
    expect(seen[0]?.headers.authorization).toBeUndefined();
  });

  it('names the URL without the password when Prometheus refuses them', async () => {
    wantAuth = 'Basic something-else';
    const err: unknown = await ask(withCredentials()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const { message } = err as Error;
    expect(message).toContain(`http://${base}/prom/api/v1/alerts answered HTTP 401`);
    expect(message).not.toContain(encodeURIComponent(PASSWORD));
    expect(message).not.toContain(PASSWORD);
  });

  it('keeps the password out of the printed config and out of log lines that carry the URL', () => {
    const url = withCredentials();
    const shown = JSON.stringify(redactConfig({ fleet: { blockers: { prometheus: { url } } } }));
    expect(shown).not.toContain(encodeURIComponent(PASSWORD));
    expect(shown).toContain(`${USER}:[REDACTED]@${base}`);

    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    log.info({ blocker: { url } }, `asking ${url}`);
    expect(lines.join('')).not.toContain(encodeURIComponent(PASSWORD));
    expect(lines.join('')).toContain(base);
  });
});
