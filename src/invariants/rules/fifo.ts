// First in, first out by the API server's clock among the nodes waiting for a fleet slot (issue 48):
// when a node takes a slot, no node that queued before it (the write that put drainer.dev/queued on
// it reached the API server earlier) is still waiting, unless there were free slots for them too.
// The queue's one sanctioned jump: a slot left free for a lease duration while the nodes ahead did
// not take it (they are taken for gone). Agents' clocks play no part: with two agents 30 s apart, a
// node cordoned 20 s later went first when each stamped its queue time on its own clock.
// Needs the queue as the API server saw it (an observation: the soak records it); else says nothing.
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, ObservedQueue, ObservedSpan, World } from '../world.ts';

type SlotSpan = ObservedQueue['slots'][number];

/**
 * The API server's time as the agents learn it: its Date header, whole seconds. Two nodes queued
 * within a second of each other have no order the agents could know; one queued a second earlier does.
 * A record on a faster clock (the soak's runs SCALE times the Date header's) says how long that is.
 */
const RESOLUTION_MS = 1000;

/** In the span at t: from its start (since, where a stay kept an older place) until its end. */
const during = (s: ObservedSpan & { since?: number }, t: number): boolean =>
  (s.since ?? s.from) <= t && (s.until === undefined || s.until > t);

/** When the slot became free for waiters before t: its last holder gave it back, or its Lease ran out. */
function freeSince(q: ObservedQueue, take: SlotSpan): number {
  const before = q.slots
    .filter((s) => s.slot === take.slot && s !== take && s.from < take.from)
    .sort((a, b) => a.from - b.from)
    .at(-1);
  if (!before) return -Infinity;
  const gaveBack = before.until !== undefined && before.until < take.from;
  // taken over from a holder that stopped renewing: free once its Lease ran out
  return gaveBack ? (before.until ?? take.from) : (before.renewedAt ?? before.from) + q.staleMs;
}

export function queueOrder(world: World, opts: CheckOptions): Violation[] {
  const q = world.observations?.queue;
  if (!q || opts.budget <= 0) return [];
  const out: Violation[] = [];
  const resolution = q.resolutionMs ?? RESOLUTION_MS;
  for (const take of q.slots) {
    const t = take.from;
    const mine = q.queued.filter((s) => s.node === take.node && (s.since ?? s.from) <= t).at(-1);
    if (!mine || (mine.until !== undefined && mine.until < t)) continue; // took it without queueing
    const holding = (node: string) => q.slots.some((s) => s !== take && s.node === node && during(s, t));
    // back in its old place within a second before the take: no order the taker could know (the
    // label and the word of return are two writes, and the word reaches waiters by their watch)
    const knownBack = (s: { since?: number }) => s.since === undefined || s.since <= t - resolution;
    const ahead = q.queued.filter(
      (s) =>
        s.node !== take.node &&
        s.from <= mine.from - resolution &&
        during(s, t) &&
        knownBack(s) &&
        !holding(s.node),
    );
    const held = new Set(
      q.slots.filter((s) => s !== take && s.slot !== take.slot && during(s, t)).map((s) => s.slot),
    );
    const free = opts.budget - held.size;
    if (ahead.length < free) continue;
    if (t - freeSince(q, take) >= q.staleMs) continue; // the stale jump: the nodes ahead left it free
    const first = [...ahead].sort((a, b) => a.from - b.from)[0];
    if (!first) continue;
    out.push(
      violation(
        'queue-out-of-order',
        `node/${take.node}`,
        `${take.node} (queued at ${new Date(mine.from).toISOString()} by the API server's clock) took slot ${take.slot} at ${new Date(t).toISOString()} while ${[...new Set(ahead.map((s) => s.node))].join(', ')} queued before it (${first.node} at ${new Date(first.from).toISOString()}${first.since !== undefined ? `, back since ${new Date(first.since).toISOString()}` : ''}) still waited, with ${free} slot(s) free`,
        "the fair queue must order by the API server's time, not each agent's clock; compare the nodes' drainer.dev/queued labels with when they were written",
      ),
    );
  }
  return out;
}
