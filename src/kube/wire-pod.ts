// A wire over node:http(s) with one keep-alive pool and no client-node, so the daemon on every
// hypervisor stays small. In a Pod (PodWire): the ServiceAccount's mounted token and CA; the kubelet
// rewrites the token file before the token expires, so it is read again every minute and after a 401.
// Simple kubeconfigs (a token or client certificate) use it too (kubeconfig-lite.ts).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Agent, IncomingMessage, RequestOptions } from 'node:http';
import type { AgentOptions } from 'node:https';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ConfigError } from '../errors.ts';
import { bodyLength, http, https } from '../node-http.ts';
import type { KubeWire, WireRequest, WireResponse } from './http.ts';

export interface PodWireOptions {
  /** https://host:port of the API server (from KUBERNETES_SERVICE_HOST/PORT). */
  readonly server: string;
  /** The ServiceAccount mount holding `token` and `ca.crt`. */
  readonly serviceAccountDir: string;
  /** How long a read token is used before the file is read again (default 60 s). */
  readonly tokenMaxAgeMs?: number;
  readonly now?: () => number;
}

const TOKEN_MAX_AGE_MS = 60_000;

function configError(path: string, err: unknown, key = 'serviceAccount'): ConfigError {
  const why = err instanceof Error ? err.message : String(err);
  return new ConfigError([{ path: key, message: `cannot read ${path}: ${why}` }], {
    cause: err,
  });
}

const toResponse = (res: IncomingMessage): WireResponse => ({
  status: res.statusCode ?? 0,
  date: res.headers.date,
  stream: () => Readable.toWeb(res) as ReadableStream<Uint8Array>,
  text: async () => {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
});

export interface NodeWireOptions {
  /** http(s)://host:port of the API server. */
  readonly server: string;
  /** TLS: trusted CA, client certificate and key, SNI name; verification unless insecure. */
  readonly tls?: Pick<AgentOptions, 'ca' | 'cert' | 'key' | 'servername'> & {
    readonly insecure?: boolean;
  };
  /** The bearer token; `fresh` asks to read its source again (after a 401). None: no Authorization. */
  readonly token?: (fresh: boolean) => Promise<string | undefined>;
}

export class NodeWire implements KubeWire {
  readonly #base: URL;
  readonly #agent: Agent;
  readonly #send: typeof http.request;
  readonly #token: ((fresh: boolean) => Promise<string | undefined>) | undefined;

  constructor(o: NodeWireOptions) {
    this.#base = new URL(o.server);
    const secure = this.#base.protocol === 'https:';
    const { insecure, ...tls } = o.tls ?? {};
    // verification stays on unless the kubeconfig says insecure-skip-tls-verify
    this.#agent = secure
      ? new https.Agent({ keepAlive: true, ...tls, rejectUnauthorized: !insecure })
      : new http.Agent({ keepAlive: true });
    this.#send = secure ? https.request : http.request;
    this.#token = o.token;
  }

  get server(): string {
    return this.#base.origin;
  }

  #exchange(req: WireRequest, token: string | undefined): Promise<IncomingMessage> {
    const opts: RequestOptions = {
      method: req.method,
      agent: this.#agent,
      headers: {
        ...req.headers,
        ...bodyLength(req.body),
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      ...(req.signal ? { signal: req.signal } : {}),
    };
    return new Promise((resolve, reject) => {
      const r = this.#send(new URL(req.pathAndQuery, this.#base), opts, resolve);
      r.once('error', reject);
      r.end(req.body);
    });
  }

  async send(req: WireRequest): Promise<WireResponse> {
    const token = await this.#token?.(false);
    const res = await this.#exchange(req, token);
    if (res.statusCode !== 401 || !this.#token) return toResponse(res);
    // the token may have been rotated since it was read: read it again, retry once if it changed
    const rotated = await this.#token(true);
    if (rotated === token) return toResponse(res);
    res.resume();
    return toResponse(await this.#exchange(req, rotated));
  }

  /** Closes the idle keep-alive connections (tests, shutdown). */
  close(): void {
    this.#agent.destroy();
  }
}

/** A token file read again once `maxAgeMs` old or when asked (`fresh`). */
export function tokenFile(
  path: string,
  maxAgeMs = TOKEN_MAX_AGE_MS,
  now: () => number = Date.now,
  /** Names the source in errors: serviceAccount or kubeconfig. */
  key = 'serviceAccount',
): (fresh: boolean) => Promise<string> {
  let cached: { value: string; readAt: number } | undefined;
  return async (fresh) => {
    if (!fresh && cached && now() - cached.readAt < maxAgeMs) return cached.value;
    let value: string;
    try {
      value = (await readFile(path, 'utf8')).trim();
    } catch (err) {
      throw configError(path, err, key);
    }
    cached = { value, readAt: now() };
    return value;
  };
}

/** The wire in a Pod. Reads the CA now: a Pod without its ServiceAccount mount fails at start. */
export class PodWire extends NodeWire {
  constructor(o: PodWireOptions) {
    const caPath = join(o.serviceAccountDir, 'ca.crt');
    let ca: string;
    try {
      ca = readFileSync(caPath, 'utf8');
    } catch (err) {
      throw configError(caPath, err);
    }
    super({
      server: o.server,
      tls: { ca },
      token: tokenFile(join(o.serviceAccountDir, 'token'), o.tokenMaxAgeMs, o.now),
    });
  }
}
