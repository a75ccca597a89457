// The capacity verdict as operators read it: "nova: 3 of 14 servers do not fit: db-7 (16 vCPU,
// 64 GiB RAM): the largest room on one other host is 12 vCPU; 40 GiB RAM short in total".
import { isAuthError, isCancelledError } from '../../errors.ts';
import type { CapacityVerdict } from '../../core/backends/plugin.ts';
import type { Amounts, Packing, Unplaced } from './pack.ts';

/** "16 vCPU", "64 GiB RAM": one amount of one class in the backend's words. */
export type Describe = (cls: string, amount: number) => string;

export interface VerdictInput {
  readonly plugin: string;
  /** "server", "VMI". */
  readonly noun: string;
  readonly packing: Packing;
  /** How many hosts the workloads could go to. */
  readonly hosts: number;
  readonly describe: Describe;
  /** What the check does not look at, appended to every message. */
  readonly caveat?: string;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

const amounts = (a: Amounts, d: Describe): string =>
  Object.entries(a)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => d(k, v))
    .join(', ');

function line(u: Unplaced, d: Describe): string {
  const needs = amounts(u.item.needs, d);
  const who = `${u.item.name}${needs ? ` (${needs})` : ''}`;
  switch (u.why) {
    case 'no-host':
      return `${who}: no other host can take it`;
    case 'zone':
      return `${who} is pinned to availability zone ${u.zone}, which has no other usable host`;
    case 'excluded':
      return `${who} has no node it may run on (taints, nodeSelector)`;
    case 'anti-affinity':
      return `${who} is in anti-affinity group ${u.group} and every usable host already holds a member`;
    case 'max-unit':
      return `${who} is larger than any other host takes for one workload (at most ${amounts(u.largest, d) || 'nothing'})`;
    case 'room': {
      // its size is said already: what it lacks is a host with that much free
      const most = amounts(u.largest, d) || 'nothing free';
      return `${who}: the largest room on one other host is ${most}`;
    }
  }
}

export function verdictOf(v: VerdictInput): CapacityVerdict {
  const { packing, describe } = v;
  const total = packing.placed.length + packing.unplaced.length;
  const caveat = v.caveat ? ` (${v.caveat})` : '';
  if (!packing.unplaced.length) {
    const where = `on ${plural(v.hosts, 'other host')}`;
    const what =
      total === 0
        ? 'nothing to move'
        : total === 1
          ? `the 1 ${v.noun} fits ${where}`
          : `all ${plural(total, v.noun)} fit ${where}`;
    return { status: 'fits', message: `${v.plugin}: ${what}${caveat}` };
  }
  const lines = packing.unplaced.map((u) => line(u, describe));
  const short = amounts(packing.shortInTotal, describe);
  const tail = short ? `; ${short} short in total` : '';
  const verb = packing.unplaced.length === 1 ? 'does' : 'do';
  return {
    status: 'short',
    message: `${v.plugin}: ${packing.unplaced.length} of ${plural(total, v.noun)} ${verb} not fit: ${lines.join('; ')}${tail}${caveat}`,
  };
}

/**
 * Runs a backend's check; an API failure makes the capacity unknown (the core refuses that under
 * enforce), while a cancel, a shutdown or rejected credentials still stop the plan.
 */
export async function unlessUnavailable(
  signal: AbortSignal,
  check: () => Promise<CapacityVerdict>,
): Promise<CapacityVerdict> {
  try {
    return await check();
  } catch (err) {
    // credentials rejected is its own failure (CloudAuthFailed), not an unknown capacity
    if (signal.aborted || isCancelledError(err) || isAuthError(err)) throw err;
    return {
      status: 'unknown',
      reason: 'unavailable',
      message: err instanceof Error ? err.message : String(err),
    };
  }
}
