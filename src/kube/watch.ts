// A list+watch loop that never gives up: list (chunked) for a resourceVersion, then watch with a
// server-side timeout; relist on 410; back off with jitter on any other error; a watchdog restarts
// silent streams. Callbacks get objects only; what to do with them is the caller's business.
// With `watchFirst` there is no list: a watch without a resourceVersion brings the existing objects.
import type { Logger } from '../observability/logger.ts';
import { backoffDelay, sleep as defaultSleep, type BackoffOptions } from './backoff.ts';
import type { KubeClients, KubeTransport } from './http.ts';
import type { KubeList, KubeObject } from './types.ts';
import { watchStream, type StreamResult, type WatchEventType } from './watch-stream.ts';

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
  readonly onOpen?: () => void;
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

/** The objects a watch has told of, and how each event reaches the caller. */
class Known<T extends KubeObject> {
  readonly map = new Map<string, T>();
  readonly #o: WatchOptions<T>;

  constructor(o: WatchOptions<T>) {
    this.#o = o;
    for (const obj of o.startAt?.objects ?? []) this.map.set(keyOf(obj), obj);
  }

  emit(type: WatchEventType, obj: T): void {
    if (type === 'DELETED') this.map.delete(keyOf(obj));
    else this.map.set(keyOf(obj), obj);
    try {
      this.#o.onEvent(type, obj);
    } catch (err) {
      this.#o.log.error({ err, path: this.#o.path }, 'watch callback failed');
    }
  }

  /** Every known object missing from `present` is reported DELETED. */
  keepOnly(present: ReadonlySet<string>): void {
    for (const [key, old] of [...this.map]) if (!present.has(key)) this.emit('DELETED', old);
  }
}

/** A list (all pages): the known objects brought up to it. Returns its resourceVersion. */
async function relist<T extends KubeObject>(o: WatchOptions<T>, known: Known<T>): Promise<string> {
  const listed = await listAll<T>(o.k, o);
  known.keepOnly(new Set(listed.items.map(keyOf)));
  for (const item of listed.items) known.emit('ADDED', item);
  o.onSynced?.(listed.items);
  return listed.resourceVersion;
}

/**
 * One watch stream from `rv`, or from the start (none). A stream from the start names every
 * existing object first: once it ended, a known object it never named is gone.
 */
async function stream<T extends KubeObject>(
  o: WatchOptions<T>,
  known: Known<T>,
  rv: string | undefined,
): Promise<StreamResult> {
  const timeoutSeconds = o.timeoutSeconds ?? 300;
  const named = new Set<string>();
  const jittered = Math.max(1, Math.round(timeoutSeconds * (0.9 + Math.random() * 0.2)));
  const res = await watchStream({
    http: o.k,
    path: o.path,
    query: o.query ?? {},
    resourceVersion: rv,
    timeoutSeconds: jittered,
    watchdogMs: jittered * 1000 + (o.watchdogMarginMs ?? 30_000),
    signal: o.signal,
    onEvent: (type, obj) => {
      if (rv === undefined) named.add(keyOf(obj));
      known.emit(type, obj as T);
    },
    ...(o.onOpen ? { onOpen: o.onOpen } : {}),
  });
  if (rv === undefined && !res.expired) known.keepOnly(named);
  return res;
}

/** Runs until the signal aborts, then resolves. Never rejects for API trouble. */
export async function runWatch<T extends KubeObject = KubeObject>(o: WatchOptions<T>): Promise<void> {
  const sleep = o.backoff?.sleep ?? defaultSleep;
  const known = new Known(o);
  let rv: string | undefined = o.startAt?.resourceVersion;
  let failures = 0;
  while (!o.signal.aborted) {
    try {
      /** The rv comes from a list made just now, or there is none (not from a long-running watch). */
      const fresh = rv === undefined;
      if (rv === undefined && !o.watchFirst) rv = await relist(o, known);
      const res = await stream(o, known, rv);
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
