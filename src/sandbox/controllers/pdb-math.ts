// PodDisruptionBudget arithmetic as the disruption controller does it (pure, for tests).

export type IntOrPercent = number | string;

/** Scales "N%" against total (rounding up, as the disruption controller does); ints pass through. */
export function scaled(value: IntOrPercent, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (!m) throw new RangeError(`invalid int-or-percent "${value}"`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

export interface Budget {
  minAvailable?: IntOrPercent;
  maxUnavailable?: IntOrPercent;
}

export interface BudgetFacts {
  /** Pods the selector matches (int minAvailable counts these). */
  matchingPods: number;
  /** Scale of the matching pods' controllers (everything else counts these). */
  controllerScale: number;
  currentHealthy: number;
}

export interface BudgetStatus {
  expectedPods: number;
  desiredHealthy: number;
  currentHealthy: number;
  disruptionsAllowed: number;
}

export function budgetStatus(b: Budget, f: BudgetFacts): BudgetStatus {
  let expectedPods: number;
  let desiredHealthy: number;
  if (b.maxUnavailable !== undefined) {
    expectedPods = f.controllerScale;
    desiredHealthy = Math.max(0, expectedPods - scaled(b.maxUnavailable, expectedPods));
  } else if (typeof b.minAvailable === 'number') {
    expectedPods = f.matchingPods;
    desiredHealthy = b.minAvailable;
  } else if (b.minAvailable !== undefined) {
    expectedPods = f.controllerScale;
    desiredHealthy = scaled(b.minAvailable, expectedPods);
  } else {
    // Neither set: the API defaults minAvailable to 1.
    expectedPods = f.matchingPods;
    desiredHealthy = 1;
  }
  const disruptionsAllowed = Math.max(0, f.currentHealthy - desiredHealthy);
  return { expectedPods, desiredHealthy, currentHealthy: f.currentHealthy, disruptionsAllowed };
}
