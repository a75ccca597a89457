// Story: a thousand agents start together. Sweeping the gates of deleted nodes lists every gate,
// so only one of them may do it a period (issue 38): the one that takes the fleet's Lease
// drainer-gate-sweep; the others read it and come back when the next sweep is due.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import { SWEEP_LEASE, takeSweepTurn } from '../../src/core/gate/litter-turn.ts';
import { startFleetFixture, type KubeFixture } from '../kube/sandbox.ts';
import { quietLogger } from './fakes.ts';

const HOUR = 3_600_000;
let fx: KubeFixture;
beforeEach(async () => {
  fx = await startFleetFixture(['n1']);
});
afterEach(async () => fx.close());

const api = () =>
  kubeFleetApi({ k: fx.k, namespace: 'drainer', daemonSet: '', log: quietLogger(), component: 'gate-sweep' });
const turn = (instance: string, at: number) =>
  takeSweepTurn(api(), { instance, everyMs: HOUR, now: new Date(at) });

describe("the fleet sweeps deleted nodes' gates once a period", () => {
  it('of twenty agents starting at once, one sweeps; the others are told when the next sweep is due', async () => {
    const t0 = Date.parse('2026-11-26T10:00:00Z');
    const turns = await Promise.all(Array.from({ length: 20 }, (_, i) => turn(`agent-${i}`, t0)));
    expect(turns.filter((t) => t.ours)).toHaveLength(1);
    expect(new Set(turns.map((t) => t.dueAt))).toEqual(new Set([t0 + HOUR]));
  });

  it('an agent restarted within the period does not sweep again; after the period one does', async () => {
    const t0 = Date.parse('2026-11-26T10:00:00Z');
    expect((await turn('a', t0)).ours).toBe(true);
    expect(await turn('b', t0 + HOUR / 2)).toEqual({ ours: false, dueAt: t0 + HOUR });
    expect((await turn('b', t0 + HOUR + 1)).ours).toBe(true);
    expect((await api().getLease(SWEEP_LEASE))?.holder).toBe('b');
  });

  it('stamps the turn as a MicroTime, which kube-apiserver takes (6 fractional digits, not 3)', async () => {
    const t0 = Date.parse('2026-11-26T10:00:00.123Z');
    expect((await turn('a', t0)).ours).toBe(true);
    expect((await api().getLease(SWEEP_LEASE))?.renewTime).toBe('2026-11-26T10:00:00.123000Z');
    expect((await turn('b', t0 + HOUR + 1)).ours).toBe(true);
  });

  it('a last sweep stamped far in the future (a clock ahead) does not stop the sweeps for good', async () => {
    const t0 = Date.parse('2026-11-26T10:00:00Z');
    expect((await turn('ahead', t0 + 24 * HOUR)).ours).toBe(true);
    expect((await turn('b', t0)).ours).toBe(true);
  });
});
