// The wire inside a Pod: the ServiceAccount's mounted token and CA, node:https with one keep-alive
// pool. No client-node: the daemon on every hypervisor stays small. The kubelet rewrites the token
// file before the token expires, so it is read again every minute and after a 401.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Agent, request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ConfigError } from '../core/errors.ts';
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

function configError(path: string, err: unknown): ConfigError {
  const why = err instanceof Error ? err.message : String(err);
  return new ConfigError([{ path: 'serviceAccount', message: `cannot read ${path}: ${why}` }], {
    cause: err,
  });
}

const toResponse = (res: IncomingMessage): WireResponse => ({
  status: res.statusCode ?? 0,
  stream: () => Readable.toWeb(res) as ReadableStream<Uint8Array>,
  text: async () => {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
});

export class PodWire implements KubeWire {
  readonly #base: URL;
  readonly #agent: Agent;
  readonly #tokenPath: string;
  readonly #maxAge: number;
  readonly #now: () => number;
  #token: { value: string; readAt: number } | undefined;

  /** Reads the CA now: a Pod without its ServiceAccount mount fails at start, not at the first request. */
  constructor(o: PodWireOptions) {
    const caPath = join(o.serviceAccountDir, 'ca.crt');
    let ca: string;
    try {
      ca = readFileSync(caPath, 'utf8');
    } catch (err) {
      throw configError(caPath, err);
    }
    this.#base = new URL(o.server);
    // verification stays on: only the cluster's CA is trusted
    this.#agent = new Agent({ keepAlive: true, ca });
    this.#tokenPath = join(o.serviceAccountDir, 'token');
    this.#maxAge = o.tokenMaxAgeMs ?? TOKEN_MAX_AGE_MS;
    this.#now = o.now ?? Date.now;
  }

  async #bearer(fresh: boolean): Promise<string> {
    const t = this.#token;
    if (!fresh && t && this.#now() - t.readAt < this.#maxAge) return t.value;
    let value: string;
    try {
      value = (await readFile(this.#tokenPath, 'utf8')).trim();
    } catch (err) {
      throw configError(this.#tokenPath, err);
    }
    this.#token = { value, readAt: this.#now() };
    return value;
  }

  #exchange(req: WireRequest, token: string): Promise<IncomingMessage> {
    const opts: RequestOptions = {
      method: req.method,
      agent: this.#agent,
      headers: { ...req.headers, Authorization: `Bearer ${token}` },
      ...(req.signal ? { signal: req.signal } : {}),
    };
    return new Promise((resolve, reject) => {
      const r = request(new URL(req.pathAndQuery, this.#base), opts, resolve);
      r.once('error', reject);
      r.end(req.body);
    });
  }

  async send(req: WireRequest): Promise<WireResponse> {
    const token = await this.#bearer(false);
    const res = await this.#exchange(req, token);
    if (res.statusCode !== 401) return toResponse(res);
    // the kubelet may have rotated the token since it was read: read it again, retry once if it changed
    const rotated = await this.#bearer(true);
    if (rotated === token) return toResponse(res);
    res.resume();
    return toResponse(await this.#exchange(req, rotated));
  }

  /** Closes the idle keep-alive connections (tests, shutdown). */
  close(): void {
    this.#agent.destroy();
  }
}
