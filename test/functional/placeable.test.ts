// The harness's wait for Placement to catch up with Nova before a boot (no cloud needed): it waits out
// a lag Nova's own periodic task repairs, and never waits in place of Nova's real answer.
import { describe, expect, it } from 'vitest';
import { placementLag, untilPlacementAgrees, type HostView } from './support/placeable.ts';

const ready = { inventory: ['VCPU', 'MEMORY_MB', 'DISK_GB'], traits: ['COMPUTE_NODE'] };
const enabled: HostView = { serviceEnabled: true, serviceUp: true, provider: ready };
const staleTrait: HostView = {
  ...enabled,
  provider: { ...ready, traits: ['COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED'] },
};

/** A probe that answers the views in turn (the last one from then on) and counts its calls. */
function looks(...views: HostView[]): { look: () => Promise<HostView>; calls: () => number } {
  let n = 0;
  return {
    look: async () => views[Math.min(n++, views.length - 1)]!,
    calls: () => n,
  };
}

describe('Placement lagging behind Nova', () => {
  it('is COMPUTE_STATUS_DISABLED left on an enabled host (its clear met a 409), a missing provider or inventory', () => {
    expect(placementLag(enabled)).toBeUndefined();
    expect(placementLag(staleTrait)).toBe('Placement still marks it COMPUTE_STATUS_DISABLED');
    expect(placementLag({ serviceEnabled: true, serviceUp: true })).toBe('no resource provider in Placement');
    expect(placementLag({ ...enabled, provider: { inventory: ['VCPU'], traits: [] } })).toBe(
      'no MEMORY_MB, DISK_GB inventory in Placement',
    );
  });

  it('is not a host Nova itself disabled or reports down: that is Nova’s answer, not a lag', () => {
    expect(placementLag({ ...staleTrait, serviceEnabled: false })).toBeUndefined();
    expect(placementLag({ serviceEnabled: true, serviceUp: false })).toBeUndefined();
  });
});

describe('waiting for Placement before a boot', () => {
  it('goes on once nova-compute has cleared the trait', async () => {
    const probe = looks(staleTrait, staleTrait, enabled);

    await untilPlacementAgrees('compute-a', probe.look, { intervalMs: 1 });

    expect(probe.calls()).toBe(3);
  });

  it('does not wait on a host Nova disabled: the boot gets Nova’s own answer', async () => {
    const probe = looks({ ...staleTrait, serviceEnabled: false }, enabled);

    await untilPlacementAgrees('compute-a', probe.look, { intervalMs: 1 });

    expect(probe.calls()).toBe(1);
  });

  it('fails naming the host and what Placement still says when the lag outlasts the deadline', async () => {
    const probe = looks(staleTrait);

    await expect(
      untilPlacementAgrees('compute-a', probe.look, { timeoutMs: 0, intervalMs: 1 }),
    ).rejects.toThrow(
      'waiting for Placement to agree that compute-a is enabled: compute-a: Placement still marks it COMPUTE_STATUS_DISABLED',
    );
  });
});
