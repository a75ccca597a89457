// A watch over HTTP: one JSON object per line on a chunked 200 response. A resourceVersion too
// old for the history is answered as the real server does it: a 200 with a single ERROR event
// carrying a 410 Expired Status.
import type { ServerResponse } from 'node:http';
import type { ChangeEvent } from './bucket.ts';
import type { ResourceType } from './resources.ts';
import { matchesFields, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { ObjectStore } from './store.ts';
import { isStatusError, type KubeObject } from './types.ts';

export interface WatchParams {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean;
  /** Serializes an object differently (kubectl get -w asks for Tables); default: the object's JSON. */
  render?: (o: KubeObject) => string;
}

export interface WatchOptions {
  bookmarkIntervalMs: number;
  /** Registered so faults can end every open stream; returns the deregistration. */
  track(close: () => void): () => void;
}

const line = (type: string, json: string): string => `{"type":"${type}","object":${json}}\n`;

function shared(e: ChangeEvent): string {
  e.json ??= JSON.stringify(e.obj);
  return e.json;
}

export function serveWatch(
  store: ObjectStore,
  rt: ResourceType,
  params: WatchParams,
  res: ServerResponse,
  opts: WatchOptions,
): void {
  const labels = parseLabelSelector(params.labelSelector);
  const fields = parseFieldSelector(params.fieldSelector, rt.fieldLabels);
  const matches = (o: KubeObject | undefined): boolean =>
    o !== undefined &&
    (!params.namespace || o.metadata.namespace === params.namespace) &&
    labels(o.metadata.labels) &&
    matchesFields(o, fields);

  const render = params.render;
  const serialized = render ? (e: ChangeEvent) => render(e.obj) : shared;
  const initial = render ?? ((o: KubeObject) => JSON.stringify(o));
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();

  const bookmark = (annotations?: Record<string, string>) => {
    const meta = { resourceVersion: store.resourceVersion, ...(annotations ? { annotations } : {}) };
    res.write(
      line(
        'BOOKMARK',
        JSON.stringify({
          kind: rt.kind,
          apiVersion: rt.group ? `${rt.group}/${rt.version}` : rt.version,
          metadata: meta,
        }),
      ),
    );
  };

  const onChange = (e: ChangeEvent) => {
    const now = matches(e.obj);
    if (e.type === 'MODIFIED') {
      const before = matches(e.prev);
      if (now && before) res.write(line('MODIFIED', serialized(e)));
      else if (now) res.write(line('ADDED', serialized(e)));
      else if (before) res.write(line('DELETED', serialized(e)));
    } else if (now) res.write(line(e.type, serialized(e)));
  };

  const rv = params.resourceVersion;
  const fromStart = rv === undefined || rv === '' || rv === '0' || params.sendInitialEvents;
  let unsubscribe: () => void;
  try {
    if (fromStart) {
      // "Get state and start at most recent": synthetic ADDED events for what exists now.
      const page = store.listPage(rt.id, {
        namespace: params.namespace,
        labelSelector: params.labelSelector,
        fieldSelector: params.fieldSelector,
      });
      for (const o of page.items) res.write(line('ADDED', initial(o)));
      if (params.sendInitialEvents && params.allowWatchBookmarks)
        bookmark({ 'k8s.io/initial-events-end': 'true' });
      unsubscribe = store.watch(rt.id, undefined, onChange);
    } else {
      const from = Number(rv);
      unsubscribe = store.watch(rt.id, Number.isFinite(from) ? from : 0, onChange);
    }
  } catch (e) {
    if (!isStatusError(e)) throw e;
    res.end(line('ERROR', JSON.stringify(e.status)));
    return;
  }

  const timers: NodeJS.Timeout[] = [];
  const close = () => {
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    untrack();
    if (!res.writableEnded) res.end();
  };
  const untrack = opts.track(close);
  if (params.allowWatchBookmarks) timers.push(setInterval(() => bookmark(), opts.bookmarkIntervalMs).unref());
  if (params.timeoutSeconds && params.timeoutSeconds > 0) {
    timers.push(setTimeout(close, params.timeoutSeconds * 1000).unref());
  }
  res.on('close', close);
}
