// The soak's counts as RELIABILITY.md and the command print them: drains by kind (judged, and the
// VMs on the host at each return) and owners' actions by kind (what Nova answered).
import { judged } from './check.ts';
import { DRAIN_KINDS, type DrainKind, type DrainReturn } from './drains.ts';
import { OWNER_ACTIONS, type OwnerActionKind, type OwnerOutcome } from './owners.ts';

export interface DrainTally {
  readonly kind: DrainKind;
  readonly started: number;
  readonly returned: number;
  readonly succeeded: number;
  /** Returned success, not overruled, not released: the promise is about these. */
  readonly judged: number;
  /** Judged returns with a VM on the host (each a violation). */
  readonly occupied: number;
  /** VMs on the host at each judged return: count → how many returns. */
  readonly atJudged: ReadonlyMap<number, number>;
  /** Returned success after someone put the node back in service. */
  readonly overruled: number;
  /** Returned success after an operator released the node's gate in this maintenance. */
  readonly released: number;
  /** Gave up (timeout, nodeDrainTimeout, stopped at the end): VMs on the host then → how many. */
  readonly atGaveUp: ReadonlyMap<number, number>;
  /** Mean real seconds from start to return. */
  readonly meanSeconds: number;
}

const histogram = (values: readonly number[]): Map<number, number> => {
  const m = new Map<number, number>();
  for (const v of [...values].sort((a, b) => a - b)) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
};

/** "0 VMs ×23, 2 VMs ×1" (none: "—"). */
export const histogramText = (h: ReadonlyMap<number, number>): string =>
  [...h].map(([vms, n]) => `${vms} VM${vms === 1 ? '' : 's'} ×${n}`).join(', ') || '—';

export function tallyDrains(
  started: Readonly<Record<DrainKind, number>>,
  returns: readonly DrainReturn[],
): DrainTally[] {
  return DRAIN_KINDS.map((kind) => {
    const mine = returns.filter((d) => d.kind === kind);
    const ok = mine.filter((d) => d.ok);
    const j = ok.filter(judged);
    return {
      kind,
      started: started[kind],
      returned: mine.length,
      succeeded: ok.length,
      judged: j.length,
      occupied: j.filter((d) => d.onHost.occupying.length > 0).length,
      atJudged: histogram(j.map((d) => d.onHost.occupying.length)),
      overruled: ok.filter((d) => d.contradicted).length,
      released: ok.filter((d) => d.released && !d.contradicted).length,
      atGaveUp: histogram(mine.filter((d) => !d.ok).map((d) => d.onHost.occupying.length)),
      meanSeconds: mine.length ? mine.reduce((a, d) => a + d.ms, 0) / mine.length / 1000 : 0,
    };
  });
}

export interface OwnerTally {
  readonly action: OwnerActionKind;
  readonly asked: number;
  readonly accepted: number;
  /** Nova's answers to the ones it refused: status → how many. */
  readonly refused: ReadonlyMap<number, number>;
  /** No server to act on (none in the state the action needs). */
  readonly nothing: number;
}

export function tallyOwners(outcomes: readonly OwnerOutcome[]): OwnerTally[] {
  return OWNER_ACTIONS.map((action) => {
    const mine = outcomes.filter((o) => o.action === action);
    const answered = mine.filter((o) => o.status !== undefined);
    return {
      action,
      asked: answered.length,
      accepted: answered.filter((o) => (o.status ?? 0) < 300).length,
      refused: histogram(answered.filter((o) => (o.status ?? 0) >= 300).map((o) => o.status ?? 0)),
      nothing: mine.length - answered.length,
    };
  });
}
