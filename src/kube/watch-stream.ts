// One watch request: reads newline-delimited events until the server ends the stream, the watchdog
// sees silence for too long, or the caller aborts. 410 (HTTP or ERROR event) is reported, not thrown.
import { errorForStatus } from './errors.ts';
import type { KubeTransport } from './http.ts';
import type { KubeObject, KubeStatus } from './types.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StreamResult {
  /** Newest resourceVersion seen (events and bookmarks); none from a watch from the start that saw none. */
  readonly resourceVersion: string | undefined;
  /** The server said our resourceVersion is too old: relist. */
  readonly expired: boolean;
  /** The watchdog ended a silent stream. */
  readonly silent: boolean;
  readonly events: number;
}

export interface StreamOptions {
  readonly http: KubeTransport;
  readonly path: string;
  readonly query: Readonly<Record<string, string | number | boolean | undefined>>;
  /** None: the server starts at its most recent state, the existing objects first as ADDED events. */
  readonly resourceVersion: string | undefined;
  readonly timeoutSeconds: number;
  readonly watchdogMs: number;
  readonly signal: AbortSignal;
  readonly onEvent: (type: WatchEventType, obj: KubeObject) => void;
  /** The server answered 200: the stream is open. */
  readonly onOpen?: () => void;
}

interface WireEvent {
  type?: string;
  object?: KubeObject | KubeStatus;
}

export async function watchStream(o: StreamOptions): Promise<StreamResult> {
  const local = new AbortController();
  const signal = AbortSignal.any([o.signal, local.signal]);
  let rv = o.resourceVersion;
  let events = 0;
  let silent = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      silent = true;
      local.abort(new Error('watch silent'));
    }, o.watchdogMs);
  };
  const query = {
    ...o.query,
    watch: 1,
    resourceVersion: rv,
    allowWatchBookmarks: true,
    timeoutSeconds: o.timeoutSeconds,
  };
  arm();
  try {
    const res = await o.http.send({ path: o.path, query, signal, timeoutMs: 0 }, { stream: true });
    if (res.code === 410) return { resourceVersion: rv, expired: true, silent, events };
    if (res.code !== 200 || !res.stream)
      throw errorForStatus(res.code, res.body as KubeStatus, 'GET', o.path);
    o.onOpen?.();
    const reader = res.stream.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        arm();
        buffer += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (!line) continue;
          const ev = JSON.parse(line) as WireEvent;
          if (ev.type === 'ERROR') {
            const status = (ev.object ?? {}) as KubeStatus;
            if (status.code === 410) return { resourceVersion: rv, expired: true, silent, events };
            throw errorForStatus(status.code ?? 500, status, 'GET', o.path);
          }
          const obj = ev.object as KubeObject | undefined;
          if (obj?.metadata?.resourceVersion) rv = obj.metadata.resourceVersion;
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') {
            events++;
            if (obj) o.onEvent(ev.type, obj);
          }
        }
      }
    } catch (err) {
      if (!silent) throw err;
    } finally {
      reader.cancel().catch(() => undefined);
    }
    return { resourceVersion: rv, expired: false, silent, events };
  } catch (err) {
    if (silent && !o.signal.aborted) return { resourceVersion: rv, expired: false, silent, events };
    throw err;
  } finally {
    clearTimeout(timer);
    local.abort();
  }
}
