// The API server's own /metrics (Prometheus text), read with the kubeconfig's credentials: what
// the fleet-real bench measures the agents by, rather than by what the agents say they did.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import yaml from 'js-yaml';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Credentials {
  readonly url: URL;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly token?: string;
}

type Named<T> = { name?: string } & T;
interface Kubeconfig {
  'current-context'?: string;
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
  clusters?: Named<{ cluster?: Record<string, string> }>[];
  users?: Named<{ user?: Record<string, string> }>[];
}

/** A field given inline (base64 `-data`) or as a file. */
function material(o: Record<string, string> | undefined, field: string): Buffer | undefined {
  const data = o?.[`${field}-data`];
  if (data) return Buffer.from(data, 'base64');
  const file = o?.[field];
  return file ? readFileSync(file) : undefined;
}

export function credentials(kubeconfigYaml: string): Credentials {
  const kc = yaml.load(kubeconfigYaml) as Kubeconfig;
  const ctx = kc.contexts?.find((c) => c.name === kc['current-context']) ?? kc.contexts?.[0];
  const cluster = kc.clusters?.find((c) => c.name === ctx?.context?.cluster)?.cluster;
  const user = kc.users?.find((u) => u.name === ctx?.context?.user)?.user;
  if (!cluster?.server) throw new Error('the fleet kubeconfig names no server');
  const ca = material(cluster, 'certificate-authority');
  const cert = material(user, 'client-certificate');
  const key = material(user, 'client-key');
  return {
    url: new URL(cluster.server),
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(user?.token ? { token: user.token } : {}),
  };
}

/** `name{a="x",b="y"} 12.5` lines; comments and blank lines skipped. */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  const line = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
  const label = /(\w+)="((?:[^"\\]|\\.)*)"/g;
  for (const l of text.split('\n')) {
    if (!l || l.startsWith('#')) continue;
    const m = line.exec(l);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(label)) labels[k!] = v!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of a metric's samples (those `where` keeps). */
export function total(
  samples: readonly Sample[],
  name: string,
  where: (labels: Readonly<Record<string, string>>) => boolean = () => true,
): number {
  return samples.filter((s) => s.name === name && where(s.labels)).reduce((a, s) => a + s.value, 0);
}

export function scrapeMetrics(c: Credentials, timeoutMs = 10_000): Promise<Sample[]> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: c.url.hostname,
        port: c.url.port || 443,
        path: '/metrics',
        ...(c.ca ? { ca: c.ca } : {}),
        ...(c.cert ? { cert: c.cert } : {}),
        ...(c.key ? { key: c.key } : {}),
        headers: c.token ? { Authorization: `Bearer ${c.token}` } : {},
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(parseMetrics(body))
            : reject(new Error(`GET /metrics: ${res.statusCode}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('GET /metrics: timed out')));
    req.on('error', reject);
    req.end();
  });
}

// ---- figures from a scrape -----------------------------------------------------------------------

const LONG = new Set(['WATCH', 'CONNECT']);
export const requestsOf = (s: readonly Sample[]) =>
  total(s, 'apiserver_request_total', (l) => !LONG.has(l.verb ?? ''));
export const watchesOf = (s: readonly Sample[]) =>
  total(s, 'apiserver_longrunning_requests', (l) => l.verb === 'WATCH');
export const bytesOf = (s: readonly Sample[]) =>
  total(s, 'apiserver_response_sizes_sum') + total(s, 'apiserver_watch_events_sizes_sum');
/** Requests in the window by "<verb> <resource>[/<subresource>]", less `own` (the bench's). */
export const byVerb = (a: readonly Sample[], b: readonly Sample[], own: Record<string, number>) => {
  const out: Record<string, number> = {};
  for (const s of b)
    if (s.name === 'apiserver_request_total' && !LONG.has(s.labels.verb ?? '')) {
      const key = `${s.labels.verb} ${s.labels.resource}${s.labels.subresource ? `/${s.labels.subresource}` : ''}`;
      out[key] = (out[key] ?? 0) + s.value;
    }
  for (const s of a)
    if (s.name === 'apiserver_request_total' && !LONG.has(s.labels.verb ?? '')) {
      const key = `${s.labels.verb} ${s.labels.resource}${s.labels.subresource ? `/${s.labels.subresource}` : ''}`;
      out[key] = (out[key] ?? 0) - s.value;
    }
  for (const [key, v] of Object.entries(own)) out[key] = (out[key] ?? 0) - v;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v > 0));
};
export const objectsOf = (s: readonly Sample[]) =>
  Object.fromEntries(
    s
      .filter((x) => x.name === 'apiserver_storage_objects' && x.value > 0)
      .map((x) => [x.labels.resource ?? '', x.value]),
  );

export interface Window {
  readonly at: number;
  readonly samples: Sample[];
}

export async function window(c: Credentials): Promise<Window> {
  return { at: Date.now(), samples: await scrapeMetrics(c) };
}
