// One page of a list: namespace/node indexes first, then label and field selectors, and the
// continue token that resumes a paged list at the resourceVersion of its first page.
import { type Bucket } from './bucket.ts';
import { matchesFields, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { badRequest, gone } from './status.ts';
import type { KubeObject } from './types.ts';

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ListPage {
  /** Stored objects (shared, never mutate); `list()` returns copies instead. */
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

interface ContinueToken {
  rv: number;
  start: string;
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';

/** The page of `b` that `opts` asks for; `rv` is the store's current resourceVersion. */
export function listPage(b: Bucket, rv: number, opts: ListOptions): ListPage {
  const labels = parseLabelSelector(opts.labelSelector);
  const fields = parseFieldSelector(opts.fieldSelector, b.rt.fieldLabels);
  const nodeReq = fields.find((f) => f.path === 'spec.nodeName' && !f.negate);
  const nsReq = fields.find((f) => f.path === 'metadata.namespace' && !f.negate);
  let keys = b.keys({ namespace: opts.namespace || nsReq?.value, nodeName: nodeReq?.value });
  let token: ContinueToken | undefined;
  if (opts.continue) {
    token = decodeContinue(opts.continue);
    if (token.rv < b.floor) throw gone(CONTINUE_EXPIRED);
    keys = keys.slice(firstAfter(keys, token.start));
  }
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const items: KubeObject[] = [];
  let i = 0;
  for (; i < keys.length && items.length < limit; i++) {
    const o = b.objects.get(keys[i] as string);
    if (o && labels(o.metadata.labels) && matchesFields(o, fields)) items.push(o);
  }
  const pageRv = token ? token.rv : rv;
  const page: ListPage = { items, resourceVersion: String(pageRv) };
  if (i < keys.length) {
    const last = keys[i - 1] as string;
    page.continue = Buffer.from(JSON.stringify({ rv: pageRv, start: last })).toString('base64url');
    if (!opts.labelSelector && !opts.fieldSelector) page.remainingItemCount = keys.length - i;
  }
  return page;
}

/** Index of the first key greater than `start` in sorted `keys` (binary search). */
function firstAfter(keys: readonly string[], start: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) <= start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function decodeContinue(s: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(s, 'base64url').toString()) as ContinueToken;
    if (typeof t.rv === 'number' && typeof t.start === 'string') return t;
  } catch {
    // fall through
  }
  throw badRequest(
    'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
  );
}
