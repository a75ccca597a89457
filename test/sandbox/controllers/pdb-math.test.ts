import { describe, expect, it } from 'vitest';
import { budgetStatus, scaled } from '../../../src/sandbox/controllers/pdb-math.ts';

describe('PDB arithmetic', () => {
  it('counts matching pods for an integer minAvailable', () => {
    expect(
      budgetStatus({ minAvailable: 4 }, { matchingPods: 6, controllerScale: 8, currentHealthy: 6 }),
    ).toEqual({
      expectedPods: 6,
      desiredHealthy: 4,
      currentHealthy: 6,
      disruptionsAllowed: 2,
    });
  });

  it('scales a percentage minAvailable against the controllers, rounding up', () => {
    const s = budgetStatus(
      { minAvailable: '50%' },
      { matchingPods: 3, controllerScale: 3, currentHealthy: 3 },
    );
    expect(s).toMatchObject({ expectedPods: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
  });

  it('derives desiredHealthy from maxUnavailable, int or percent', () => {
    expect(
      budgetStatus({ maxUnavailable: 1 }, { matchingPods: 4, controllerScale: 4, currentHealthy: 4 }),
    ).toMatchObject({ expectedPods: 4, desiredHealthy: 3, disruptionsAllowed: 1 });
    // 25% of 5 rounds up to 2 unavailable
    expect(
      budgetStatus({ maxUnavailable: '25%' }, { matchingPods: 5, controllerScale: 5, currentHealthy: 4 }),
    ).toMatchObject({ desiredHealthy: 3, disruptionsAllowed: 1 });
  });

  it('never allows a negative number of disruptions', () => {
    expect(
      budgetStatus({ minAvailable: 4 }, { matchingPods: 4, controllerScale: 4, currentHealthy: 2 })
        .disruptionsAllowed,
    ).toBe(0);
  });

  it('rejects a malformed percentage', () => {
    expect(() => scaled('ten%', 10)).toThrow(RangeError);
  });
});
