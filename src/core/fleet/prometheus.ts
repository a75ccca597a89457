// The Prometheus blocker's one question: which alerts fire now (GET <url>/api/v1/alerts), over
// node:http(s) like the rest of the daemon (no fetch/undici: footprint), TLS verification on.
// Anything but a clean answer is an error the caller counts as blocked.
import { readFileSync } from 'node:fs';
import { http, https } from '../../node-http.ts';

export interface PrometheusBlocker {
  readonly url: string;
  readonly alertName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly cacert?: string;
  readonly requestTimeout: number;
}

interface Alert {
  readonly labels?: Record<string, string>;
  readonly state?: string;
}

/** GET, JSON body; rejects with a message naming the URL (never credentials: userinfo is dropped). */
function getJson(
  url: URL,
  authorization: string | undefined,
  o: PrometheusBlocker,
  signal: AbortSignal,
): Promise<unknown> {
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? https.request : http.request;
    const req = send(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json', ...(authorization ? { authorization } : {}) },
        signal,
        timeout: o.requestTimeout * 1000,
        ...(o.cacert ? { ca: readFileSync(o.cacert) } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) >= 300)
            return reject(new Error(`${shown} answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new Error(`${shown} answered with something that is not JSON`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${shown}: no answer within ${o.requestTimeout} s`)));
    req.on('error', (err) => reject(new Error(`${shown} unreachable: ${err.message}`)));
    req.end();
  });
}

/**
 * Userinfo in the URL (`https://user:pass@prometheus…`, percent-encoded) as a Basic Authorization
 * header: node:http would send it too, but the URL then also reaches error messages.
 */
function basicAuth(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

/** The names of firing alerts that match; throws when Prometheus cannot be asked or answers oddly. */
export async function firingAlerts(o: PrometheusBlocker, signal: AbortSignal): Promise<string[]> {
  const url = new URL('api/v1/alerts', o.url.endsWith('/') ? o.url : `${o.url}/`);
  const authorization = basicAuth(url);
  const body = (await getJson(url, authorization, o, signal)) as {
    status?: string;
    data?: { alerts?: unknown };
  };
  const alerts = body.data?.alerts;
  if (body.status !== 'success' || !Array.isArray(alerts))
    throw new Error(
      `${url.origin}${url.pathname} answered without data.alerts (status ${String(body.status)})`,
    );
  const name = new RegExp(`^(?:${o.alertName})$`);
  const wanted = Object.entries(o.labels);
  const names = (alerts as Alert[])
    .filter((a) => a.state === 'firing')
    .filter((a) => name.test(a.labels?.alertname ?? ''))
    .filter((a) => wanted.every(([k, v]) => a.labels?.[k] === v))
    .map((a) => a.labels?.alertname ?? '?');
  return [...new Set(names)].sort();
}
