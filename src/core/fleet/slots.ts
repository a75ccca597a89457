// The slots' names and holders, and the clock estimate of a Lease's expiry: what the budget, the
// status view and the invariants all read (no behaviour of the budget's own).
import type { LeaseView } from './types.ts';

export const slotName = (i: number): string => `drainer-evacuation-${i}`;

/** "2" → 2; "10%" of the agents, rounded down, at least 1. 0 means no budget (never called). */
export function slotCount(budget: string | number, agents: number): number {
  if (typeof budget === 'number') return budget;
  const pct = Number(budget.slice(0, -1));
  return Math.max(1, Math.floor((agents * pct) / 100));
}

/**
 * A slot's holder names the node and the agent instance ("node-7/<pod>/<uid>"): two agents of one
 * node (a rollout) are two holders, so the one that lost the slot to the other learns it at its
 * next renewal. The queue reasons per node.
 */
export const slotHolder = (node: string, instance: string | undefined): string =>
  instance ? `${node}/${instance}` : node;
/** The node of a slot holder (a holder written before instances is the node name itself). */
export const holderNode = (holder: string): string => holder.split('/')[0] ?? holder;

/**
 * By the clocks: the holder's renewTime against `now`. Only for showing an estimate (status); a
 * decision to take a Lease is made on observation (ObservedLeases), as the clocks may differ.
 */
export function leaseExpired(l: LeaseView, now: number, defaultSeconds: number): boolean {
  if (!l.holder) return true;
  const renewed = Date.parse(l.renewTime ?? l.acquireTime ?? '');
  if (Number.isNaN(renewed)) return true;
  return now > renewed + (l.durationSeconds ?? defaultSeconds) * 1000;
}
