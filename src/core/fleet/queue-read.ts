// Who is ahead of a waiter in the fleet queue: the queued Nodes (drainer.dev/queued=<ms>), read by
// label selector, never a list of every Node. In a long queue a waiter reads only the nodes queued
// just before it, from the API server's watch cache (issue 38); one that likely has few ahead reads a
// page from etcd first, which alone shows a queue of a page or fewer (issue 51).
import type { KubeTransport } from '../../kube/http.ts';
import { listQueuedNodes, listQueuedPage, QUEUED_LABEL } from '../../kube/lease.ts';
import type { KubeNode } from '../../kube/types.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';

/**
 * How far back a waiter looks for the nodes queued just before it, widening until more than a page
 * are there: 1 s holds a page when a rack was cordoned at once; an hour, a queue filled slowly.
 */
const QUEUE_WINDOW_MS = [1_000, 4_000, 16_000, 64_000, 256_000, 1_024_000, 3_600_000];

// a node held at the start gate (window, freeze, blocker) keeps its label and place, but is not
// ahead of anyone: a node past the gate (a blocker elsewhere cleared, --now) goes on
const heldAtGate = (n: KubeNode): boolean =>
  parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.waiting !== undefined;

const queued = (n: KubeNode): { node: string; since: number } => ({
  node: n.metadata.name ?? '',
  since: Number(n.metadata.labels?.[QUEUED_LABEL] ?? 0),
});

/** Every queued node not held at the start gate. */
export async function queuedNodes(k: KubeTransport): Promise<{ node: string; since: number }[]> {
  return (await listQueuedNodes(k)).filter((n) => !heldAtGate(n)).map(queued);
}

/** FleetApi.queuedAhead: see its contract in types.ts. */
export async function queuedAhead(
  k: KubeTransport,
  { node, since, want, fewAhead }: { node: string; since: number; want?: number; fewAhead?: boolean },
): Promise<{ nodes: string[]; more: boolean }> {
  // ahead: queued before this node, or at the same time with a smaller name (hence `< since + 1`);
  // neither this node nor one held at the gate is
  const ahead = (items: readonly KubeNode[]) =>
    items
      .filter((x) => !heldAtGate(x))
      .map(queued)
      .filter((n) => n.since < since || (n.since === since && n.node < node))
      .map((n) => n.node);
  const whole = async () => ({
    nodes: ahead((await listQueuedPage(k, { before: since + 1, cached: true })).items),
    more: false,
  });
  if (want === undefined) return whole();
  // the nodes queued just before this one, from the API server's cache: in a roll they are many
  const near = async (ms: number) =>
    ahead((await listQueuedPage(k, { after: since - ms, before: since + 1, cached: true })).items);
  // few likely ahead: the page alone tells a short queue (one read), so it comes first; else the
  // window of the last second, which alone tells a long one (the roll's hand-off: one cached read)
  const windows = fewAhead ? QUEUE_WINDOW_MS : QUEUE_WINDOW_MS.slice(1);
  if (!fewAhead) {
    const close = await near(QUEUE_WINDOW_MS[0] ?? 1_000);
    if (close.length > want) return { nodes: close, more: true };
  }
  // a page from etcd, read only until it is full (want + 1 ahead, and this node): a queue no
  // longer than a page is read whole. The API server gives a continue token whenever Nodes are
  // left unread, matching or not: only a page with more than `want` ahead is a long queue
  const page = await listQueuedPage(k, { before: since + 1, limit: want + 2 });
  const first = ahead(page.items);
  if (!page.metadata.continue) return { nodes: first, more: false };
  if (first.length <= want) return whole();
  for (const ms of windows) {
    const nodes = await near(ms);
    if (nodes.length > want) return { nodes, more: true };
  }
  return whole();
}
