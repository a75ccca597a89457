// A small client for the real API server with the admin kubeconfig's client certificate: JSON requests that
// always carry their Content-Length, and a raw exchange on one TLS connection for the wire's facts.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import yaml from 'js-yaml';

export interface Answer {
  status: number;
  contentType: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** For a raw exchange: each HTTP status line the server wrote on the connection, in order. */
  raw?: string[];
}

export interface ApiClient {
  request(method: string, path: string, body?: unknown, contentType?: string, uid?: string): Promise<Answer>;
  /** Writes `bytes` as they are on one connection and reads until the server closes it (or 5 s pass). */
  raw(bytes: string): Promise<Answer>;
  close(): void;
}

interface KubeconfigYaml {
  'current-context': string;
  contexts: { name: string; context: { cluster: string; user: string } }[];
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users: { name: string; user: { 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
}

const b64 = (s?: string) => (s ? Buffer.from(s, 'base64') : undefined);

/** `as`: the user to impersonate (the emulated KubeVirt node side acts as virt-handler's service account). */
export function apiClient(kubeconfig: string, opts: { as?: string } = {}): ApiClient {
  const kc = yaml.load(readFileSync(kubeconfig, 'utf8')) as KubeconfigYaml;
  const ctx = kc.contexts.find((c) => c.name === kc['current-context']) ?? kc.contexts[0]!;
  const cluster = kc.clusters.find((c) => c.name === ctx.context.cluster)!.cluster;
  const user = kc.users.find((u) => u.name === ctx.context.user)!.user;
  const url = new URL(cluster.server);
  const creds = {
    ca: b64(cluster['certificate-authority-data']),
    cert: b64(user['client-certificate-data']),
    key: b64(user['client-key-data']),
  };
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ...creds });
  return {
    request(method, path, body, contentType = 'application/json', uid) {
      let text = body === undefined ? undefined : JSON.stringify(body);
      if (text && uid) text = text.replaceAll('"<uid>"', JSON.stringify(uid));
      return new Promise((resolve, reject) => {
        const req = https.request(
          {
            host: url.hostname,
            port: url.port || 443,
            method,
            path,
            agent,
            headers: {
              Accept: 'application/json',
              ...(opts.as ? { 'Impersonate-User': opts.as } : {}),
              ...(text === undefined
                ? {}
                : { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) }),
            },
          },
          (res) => {
            let data = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (data += c));
            res.on('end', () => {
              const ct = res.headers['content-type'] ?? null;
              let parsed: unknown = data;
              try {
                parsed = data ? JSON.parse(data) : null;
              } catch {
                // a plain-text answer stays text
              }
              resolve({ status: res.statusCode ?? 0, contentType: ct?.split(';')[0] ?? null, body: parsed });
            });
          },
        );
        req.on('error', reject);
        req.end(text);
      });
    },
    raw(bytes) {
      return new Promise((resolve, reject) => {
        const socket = tls.connect({
          host: url.hostname,
          port: Number(url.port || 443),
          ...(net.isIP(url.hostname) ? {} : { servername: url.hostname }),
          ...creds,
          ALPNProtocols: ['http/1.1'],
        });
        let data = '';
        const done = () => {
          socket.destroy();
          const raw = [...data.matchAll(/^HTTP\/1\.1 (\d{3}) [^\r\n]*/gm)].map((m) => m[0]);
          resolve({
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw[0] ?? '')?.[1] ?? 0),
            contentType: null,
            body: null,
            raw,
          });
        };
        socket.setEncoding('utf8');
        socket.on('secureConnect', () => socket.write(bytes));
        socket.on('data', (c: string) => (data += c));
        socket.on('end', done);
        socket.on('error', reject);
        socket.setTimeout(5_000, done);
      });
    },
    close: () => agent.destroy(),
  };
}
