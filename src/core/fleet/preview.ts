// Where a node would stand in the fleet queue if it were cordoned now (`drainer plan`): the slot
// Leases and their live holders, and the queued Nodes ahead of it. Reads only.
import { slotCount, slotName } from './budget.ts';
import { waitText } from './step.ts';
import type { FleetApi, LeaseView, SlotHolder } from './types.ts';

export interface FleetPreview {
  /** 0: no budget (fleet.maxConcurrentEvacuations 0). */
  readonly slots: number;
  readonly holders: readonly SlotHolder[];
  /** 0: a slot is free and nobody waits ahead, it would start at once; else its place in the queue. */
  readonly position: number;
  readonly text: string;
}

const live = (l: LeaseView, now: Date): boolean => {
  if (!l.holder) return false;
  const renewed = Date.parse(l.renewTime ?? l.acquireTime ?? '');
  return Number.isNaN(renewed) || renewed + (l.durationSeconds ?? 0) * 1000 > now.getTime();
};

export async function previewFleet(o: {
  api: FleetApi;
  budget: string | number;
  node: string;
  now: Date;
}): Promise<FleetPreview> {
  if (o.budget === 0) return { slots: 0, holders: [], position: 0, text: 'no fleet budget: would start now' };
  const agents = typeof o.budget === 'string' ? await o.api.agentCount() : 0;
  const total = slotCount(o.budget, agents);
  const leases = await Promise.all(Array.from({ length: total }, (_, i) => o.api.getLease(slotName(i))));
  const holders = leases.flatMap((l) =>
    l && live(l, o.now)
      ? [{ node: l.holder ?? '', slot: l.name, ...(l.acquireTime ? { since: l.acquireTime } : {}) }]
      : [],
  );
  if (holders.some((h) => h.node === o.node))
    return { slots: total, holders, position: 0, text: 'holds a fleet slot already' };
  const queue = (await o.api.queuedNodes()).sort((a, b) => a.since - b.since || a.node.localeCompare(b.node));
  const at = queue.findIndex((q) => q.node === o.node);
  const ahead = at >= 0 ? at : queue.length;
  if (holders.length < total && ahead === 0)
    return {
      slots: total,
      holders,
      position: 0,
      text: `a fleet slot is free (${holders.length} of ${total} taken): would start now`,
    };
  const position = ahead + 1;
  return { slots: total, holders, position, text: `would queue: ${waitText({ total, holders, position })}` };
}
