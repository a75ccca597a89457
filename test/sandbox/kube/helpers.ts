// Shared arrangement for the sandbox API server's contract tests: a server on loopback and a
// small fetch wrapper that speaks JSON.
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../../../src/sandbox/kube/index.ts';

/** Response bodies are arbitrary JSON that tests inspect with matchers. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Answer<T = Json> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Api {
  server: KubeApiServer;
  call<T = Json>(method: string, path: string, body?: unknown, contentType?: string): Promise<Answer<T>>;
  get<T = Json>(path: string): Promise<Answer<T>>;
}

export async function startApi(opts: Parameters<typeof startKubeApiServer>[0] = {}): Promise<Api> {
  const server = await startKubeApiServer(opts);
  const call = async <T>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(server.url + path, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': contentType },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
  };
  return { server, call, get: (path) => call('GET', path) };
}

export function node(name: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
    ...extra,
  };
}

export function pod(
  namespace: string,
  name: string,
  opts: {
    node?: string;
    labels?: Record<string, string>;
    phase?: string;
    ready?: boolean;
    grace?: number;
  } = {},
): KubeObject {
  return {
    metadata: { name, namespace, labels: opts.labels ?? {} },
    spec: {
      nodeName: opts.node,
      terminationGracePeriodSeconds: opts.grace,
      containers: [{ name: 'app', image: 'registry.example/app:1' }],
    },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

/** Reads a watch stream's JSON lines until `until` says stop (or the stream ends). */
export async function readWatch(
  url: string,
  until: (events: { type: string; object: Json }[]) => boolean,
  signal?: AbortSignal,
): Promise<{ type: string; object: Json }[]> {
  const ctrl = new AbortController();
  signal?.addEventListener('abort', () => ctrl.abort());
  const res = await fetch(url, { signal: ctrl.signal });
  const events: { type: string; object: Json }[] = [];
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
      if (until(events)) {
        ctrl.abort();
        break;
      }
    }
  } catch (e) {
    if (!ctrl.signal.aborted) throw e;
  }
  return events;
}
