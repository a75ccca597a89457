// A list+watch loop that never gives up: list (chunked) for a resourceVersion, then watch with a
// server-side timeout; relist on 410; back off with jitter on any other error; a watchdog restarts
// silent streams. Callbacks get objects only; what to do with them is the caller's business.
// With `watchFirst` there is no list: a watch without a resourceVersion brings the existing objects.
import type { Logger } from '../observability/logger.ts';
import { backoffDelay, sleep as defaultSleep, type BackoffOptions } from './backoff.ts';
import type { KubeClients, KubeTransport } from './http.ts';
import type { KubeList, KubeObject } from './types.ts';
import { watchStream, type WatchEventType } from './watch-stream.ts';

export type { WatchEventType } from './watch-stream.ts';

export interface WatchOptions<T extends KubeObject = KubeObject> {
  /** Clients from createKubeClients / connectKube (requests are counted). */
  readonly k: KubeClients;
  /** Collection path, e.g. /api/v1/nodes or /apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances. */
  readonly path: string;
  /** fieldSelector, labelSelector … */
  readonly query?: Readonly<Record<string, string | undefined>>;
  /** Every change. After a (re)list: ADDED for each listed object, DELETED for known ones now missing. */
  onEvent(type: WatchEventType, obj: T): void;
  /** After each successful (re)list, with the full current set. */
  onSynced?(objects: readonly T[]): void;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Server-side watch timeout, jittered ±10 % (default 300). */
  readonly timeoutSeconds?: number;
  /** Extra silence allowed beyond timeoutSeconds before the watchdog restarts the stream (default 30 s). */
  readonly watchdogMarginMs?: number;
  readonly backoff?: BackoffOptions;
  /** Start from a list the caller already made (no initial list; its objects count as known). */
  readonly startAt?: { readonly resourceVersion: string; readonly objects: readonly T[] };
  /** List page size (default 500). */
  readonly pageSize?: number;
  /**
   * No list: open (and, after a 410, reopen) with a watch that carries no resourceVersion, which the
   * server answers with the existing objects as ADDED events, then the changes: one request instead
   * of two, for small collections. No event marks the end of that initial state (sendInitialEvents
   * needs the WatchList feature), so onSynced is never called; known objects such a stream never
   * named are reported DELETED when it ends (its initial events are all in by then).
   */
  readonly watchFirst?: boolean;
  /** Each time a watch stream is open (its 200 answer came). */
  onOpen?(): void;
}

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** Lists every page (limit/continue) of a collection. */
export async function listAll<T extends KubeObject>(
  http: KubeTransport,
  o: {
    readonly path: string;
    readonly query?: Readonly<Record<string, string | undefined>>;
    readonly pageSize?: number;
    readonly signal?: AbortSignal;
  },
): Promise<{ items: T[]; resourceVersion: string }> {
  const items: T[] = [];
  let cont: string | undefined;
  for (;;) {
    const page = await http.request<KubeList<T>>({
      path: o.path,
      query: { ...o.query, limit: o.pageSize ?? 500, continue: cont },
      ...(o.signal ? { signal: o.signal } : {}),
    });
    items.push(...page.items);
    cont = page.metadata.continue || undefined;
    if (!cont) return { items, resourceVersion: page.metadata.resourceVersion ?? '' };
  }
}

/** Runs until the signal aborts, then resolves. Never rejects for API trouble. */
export async function runWatch<T extends KubeObject = KubeObject>(o: WatchOptions<T>): Promise<void> {
  const http: KubeTransport = o.k;
  const sleep = o.backoff?.sleep ?? defaultSleep;
  const timeoutSeconds = o.timeoutSeconds ?? 300;
  const known = new Map<string, T>();
  const emit = (type: WatchEventType, obj: T): void => {
    if (type === 'DELETED') known.delete(keyOf(obj));
    else known.set(keyOf(obj), obj);
    try {
      o.onEvent(type, obj);
    } catch (err) {
      o.log.error({ err, path: o.path }, 'watch callback failed');
    }
  };
  let rv: string | undefined = o.startAt?.resourceVersion;
  for (const obj of o.startAt?.objects ?? []) known.set(keyOf(obj), obj);
  let failures = 0;
  /** The rv comes from a list made just now (not from a long-running watch). */
  let fresh: boolean;
  while (!o.signal.aborted) {
    try {
      const fromStart = rv === undefined && o.watchFirst === true;
      if (rv === undefined && !fromStart) {
        const listed = await listAll<T>(http, o);
        const present = new Set(listed.items.map(keyOf));
        for (const [key, old] of [...known]) if (!present.has(key)) emit('DELETED', old);
        for (const item of listed.items) emit('ADDED', item);
        rv = listed.resourceVersion;
        fresh = true;
        o.onSynced?.(listed.items);
      } else fresh = fromStart;
      const named = new Set<string>();
      const jittered = Math.max(1, Math.round(timeoutSeconds * (0.9 + Math.random() * 0.2)));
      const res = await watchStream({
        http,
        path: o.path,
        query: o.query ?? {},
        resourceVersion: rv,
        timeoutSeconds: jittered,
        watchdogMs: jittered * 1000 + (o.watchdogMarginMs ?? 30_000),
        signal: o.signal,
        onEvent: (type, obj) => {
          if (fromStart) named.add(keyOf(obj));
          emit(type, obj as T);
        },
        ...(o.onOpen ? { onOpen: o.onOpen } : {}),
      });
      if (fromStart && !res.expired)
        for (const [key, old] of [...known]) if (!named.has(key)) emit('DELETED', old);
      rv = res.expired ? undefined : res.resourceVersion;
      if (res.expired) o.log.info({ path: o.path }, 'watch expired (410): starting again');
      // a server that answers 410 right after every list (or to a watch from now) must not make us spin
      if (res.expired && res.events === 0 && fresh) throw new Error('watch expired right after a list');
      failures = 0;
      if (res.silent) o.log.warn({ path: o.path }, 'watch stream silent too long: restarting');
    } catch (err) {
      if (o.signal.aborted) break;
      failures++;
      const delay = backoffDelay(failures, o.backoff);
      o.log.warn({ err, path: o.path, failures, retryInMs: delay }, 'watch failed: retrying');
      try {
        await sleep(delay, o.signal);
      } catch {
        break;
      }
    }
  }
}
