// The fleet budget's own requests in a slice of the sandbox's request log, by kind. A queue list is a
// Node list by the drainer.dev/queued label only (the label, or its value compared: the nodes ahead
// of a waiter): the drain gate's Pod lists also select on a drainer.dev label
// (drainer.dev/gate-node) and are not the budget's.
import { QUEUED_LABEL } from '../../src/names.ts';

export interface FleetRequests {
  readonly leaseWatches: number;
  readonly leaseLists: number;
  /** Reads of one Lease (after a lost race, or a renewal's 409). */
  readonly leaseGets: number;
  readonly leaseConflicts: number;
  /** Lists of the queued Nodes (label selector). */
  readonly queueLists: number;
}

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** The path and query as the client meant them (selectors arrive percent-encoded). */
function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

const queueTerm = (t: string): boolean =>
  t === QUEUED_LABEL ||
  ((t.startsWith(`${QUEUED_LABEL}<`) || t.startsWith(`${QUEUED_LABEL}>`)) &&
    /^-?\d+$/.test(t.slice(QUEUED_LABEL.length + 1)));

function isQueueList(r: LoggedRequest): boolean {
  if (r.method !== 'GET') return false;
  const url = new URL(decoded(r.path), 'http://x');
  const selector = url.searchParams.get('labelSelector');
  return url.pathname === '/api/v1/nodes' && !!selector && selector.split(',').every(queueTerm);
}

export function fleetRequests(log: readonly LoggedRequest[]): FleetRequests {
  const leases = log.filter((r) => /\/leases(\/|\?|$)/.test(r.path));
  const collection = leases.filter((r) => r.method === 'GET' && /\/leases(\?|$)/.test(r.path));
  const watches = collection.filter((r) => /[?&]watch=(1|true)/.test(r.path)).length;
  return {
    leaseWatches: watches,
    leaseLists: collection.length - watches,
    leaseGets: leases.filter((r) => r.method === 'GET' && /\/leases\/[^?]/.test(r.path)).length,
    leaseConflicts: leases.filter((r) => r.status === 409).length,
    queueLists: log.filter(isQueueList).length,
  };
}

/**
 * One request as a kind: its method and path with names and numbers folded ("GET
 * /api/v1/nodes/{name}", "GET /api/v1/nodes?labelSelector=drainer.dev/queued<N&limit=N"), so the
 * requests made while a node is Queued can be counted by what they are.
 */
export function requestKind(request: string): string {
  const [method = '', rest = ''] = request.split(' ', 2);
  const url = new URL(decoded(rest), 'http://x');
  const parts = url.pathname.split('/');
  // /api/v1/<resource>/<name>… and /apis/<group>/<version>/<resource>/<name>…, namespaces folded too
  const at = parts[1] === 'api' ? 3 : 4;
  const path = parts
    .map((p, i) => (i > at && (i - at) % 2 === 1 && parts[i - 1] !== 'status' ? '{name}' : p))
    .join('/')
    .replace(/\/namespaces\/[^/]+/, '/namespaces/{ns}');
  const query = [...url.searchParams.entries()]
    .filter(([k]) => k !== 'timeoutSeconds' && k !== 'allowWatchBookmarks')
    // numbers and the names in a set or a field selector folded (one kind for every node's gate read)
    .map(
      ([k, v]) =>
        `${k}=${v
          .replace(/ in \([^)]*\)/g, ' in (…)')
          .replace(/(spec\.nodeName=)[^,]*/g, '$1{node}')
          .replace(/-?\d+/g, 'N')}`,
    )
    .join('&');
  return `${method} ${path}${query ? `?${query}` : ''}`;
}

/** Counts by kind, most first: "12 PATCH /api/v1/nodes/{name}, 9 POST …". */
export function kindsText(kinds: ReadonlyMap<string, number>): string {
  return [...kinds]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
}
