// A node that comes back into the fleet queue in its old place (a resumed evacuation, a retry after
// a refusal, a node let through by the start gate) says so on one Lease of the fleet namespace,
// which every waiter's Lease watch already brings. A waiter whose read of the queue is older than
// the last such word reads it again before it takes a slot; else its read stands (b5f26f8 read
// the queue again before every take: two requests per node, for a case that is rare).
import { isConflictError, isNotFoundError } from '../../errors.ts';
import { microTime } from './held-slot.ts';
import type { FleetApi, LeaseView } from './types.ts';

export const RETURN_LEASE = 'drainer-queue-return';
/** "<node> <place, epoch ms>": who came back last, for people reading the Lease. */
export const RETURN_ANNOTATION = 'drainer.dev/queue-return';

/** The queue's word of returns (its Lease) as a waiter saw it: changes with every return. */
export const returnMark = (lease: LeaseView | undefined): string => lease?.resourceVersion ?? '';

/**
 * Writes the word (create or update at the read resourceVersion; another node's word at the same
 * time wins a 409, and the Lease is read again). Only after this node's queue label is written.
 * Returns the Lease as written (undefined: not written), every earlier word in it.
 */
export async function announceReturn(
  api: Pick<FleetApi, 'getLease' | 'createLease' | 'replaceLease'>,
  seen: LeaseView | undefined,
  o: { node: string; place: number; now: Date },
): Promise<LeaseView | undefined> {
  let current = seen;
  for (let tries = 0; tries < 5; tries++) {
    const next: LeaseView = {
      name: RETURN_LEASE,
      ...(current?.resourceVersion !== undefined ? { resourceVersion: current.resourceVersion } : {}),
      annotations: { ...current?.annotations, [RETURN_ANNOTATION]: `${o.node} ${o.place}` },
      renewTime: microTime(o.now),
    };
    try {
      return await (current?.resourceVersion === undefined ? api.createLease(next) : api.replaceLease(next));
    } catch (err) {
      if (!isConflictError(err) && !isNotFoundError(err)) throw err;
      current = await api.getLease(RETURN_LEASE);
    }
  }
  return undefined;
}
