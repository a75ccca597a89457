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
