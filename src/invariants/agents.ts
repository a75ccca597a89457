// Is a node's agent alive? Its node Lease (drainer-node-<node>) renewed within its duration, with
// some slack for the difference between the reader's clock and the agent's.
import { nodeLeaseName } from '../core/agent/node-lease.ts';
import type { CheckOptions, World, WorldLease } from './world.ts';

const DEFAULT_SLACK_S = 30;

/** Expired: not renewed for its duration plus slack, as of the world's time. Unknown renewals count as expired. */
export function leaseExpired(
  l: WorldLease,
  at: Date,
  opts: Pick<CheckOptions, 'agentLeaseDuration' | 'clockSlackSeconds'>,
): boolean {
  if (!l.holder || !l.renewTime) return true;
  const duration = l.durationSeconds ?? opts.agentLeaseDuration;
  const slack = opts.clockSlackSeconds ?? DEFAULT_SLACK_S;
  return Date.parse(l.renewTime) + (duration + slack) * 1000 < at.getTime();
}

export const agentLease = (world: World, node: string): WorldLease | undefined =>
  world.leases?.find((l) => l.name === nodeLeaseName(node));

/** True when alive; false when dead or absent; undefined when Leases were not read. */
export function agentAlive(world: World, node: string, opts: CheckOptions): boolean | undefined {
  if (!world.leases) return undefined;
  const l = agentLease(world, node);
  return !!l && !leaseExpired(l, world.at, opts);
}
