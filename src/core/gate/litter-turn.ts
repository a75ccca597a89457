// Whose turn it is to sweep the gates of deleted nodes. A sweep lists every gate in the namespace,
// so it is the fleet's chore, not each agent's: a thousand agents starting together would each
// list a thousand gates (issue 38). The Lease drainer-gate-sweep says when the last sweep began;
// the agent that finds it a period old takes it by a write with the resourceVersion it read (one
// winner, the others get a 409) and sweeps. The others only read it, once a period.
import { isConflictError } from '../../errors.ts';
import { microTime } from '../fleet/budget.ts';
import type { FleetApi } from '../fleet/types.ts';

export const SWEEP_LEASE = 'drainer-gate-sweep';

export interface SweepTurn {
  /** Ours: sweep now. */
  readonly ours: boolean;
  /** When the next sweep is due (ms since the epoch): the last one's start plus the period. */
  readonly dueAt: number;
}

export async function takeSweepTurn(
  api: Pick<FleetApi, 'getLease' | 'createLease' | 'replaceLease'>,
  o: { readonly instance: string; readonly everyMs: number; readonly now: Date },
): Promise<SweepTurn> {
  const now = o.now.getTime();
  const mine = {
    name: SWEEP_LEASE,
    holder: o.instance,
    durationSeconds: Math.round(o.everyMs / 1000),
    // a MicroTime: kube-apiserver refuses (400) any other precision than 6 fractional digits
    renewTime: microTime(o.now),
  };
  const taken = { ours: true, dueAt: now + o.everyMs };
  const lost = (err: unknown): SweepTurn => {
    if (isConflictError(err)) return { ours: false, dueAt: now + o.everyMs };
    throw err;
  };
  const last = await api.getLease(SWEEP_LEASE);
  if (!last)
    return api.createLease(mine).then(
      () => taken,
      (err: unknown) => lost(err),
    );
  const began = Date.parse(last.renewTime ?? '');
  // a start in the future (a clock ahead) is not trusted beyond one period
  if (!Number.isNaN(began) && began + o.everyMs > now && began <= now + o.everyMs)
    return { ours: false, dueAt: began + o.everyMs };
  return api.replaceLease({ ...last, ...mine }).then(
    () => taken,
    (err: unknown) => lost(err),
  );
}
