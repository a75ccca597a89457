// Story: the demo's live view names the pod that holds the drain. A taker that deletes the gate pod
// (Karpenter, a deletion drain) leaves it Terminating under drainer's finalizer while the spare
// drainer-gate-<node>-<hash>-b runs and guards; the demo shows the spare, not the pod on its way out.
import { describe, expect, it } from 'vitest';
import { guardingGatePod, holderText } from '../../src/demo/gate-pod.ts';
import { GATE_FINALIZER, gateName, gatePodName } from '../../src/kube/gate.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const pod = (name: string, more: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  metadata: { name, namespace: 'drainer', finalizers: [GATE_FINALIZER], ...more },
  status: { phase: 'Running' },
});
const findIn = (...pods: KubeObject[]): KubeObject[] => pods;

describe('the gate pod the demo shows', () => {
  it("is the node's own pod while it guards", () => {
    const own = pod(gateName('rack-1'));
    const shown = guardingGatePod('rack-1', findIn(own));
    expect(shown).toBe(own);
    expect(holderText('rack-1', shown!)).toBe('the gate');
  });

  it('is the spare once the own pod is being deleted, and the live view names it', () => {
    const leaving = pod(gateName('rack-1'), { deletionTimestamp: '2026-11-25T10:00:00Z' });
    const spare = pod(gatePodName('rack-1', 1));
    const shown = guardingGatePod('rack-1', findIn(leaving, spare));
    expect(shown).toBe(spare);
    expect(holderText('rack-1', shown!)).toBe(`the gate (spare pod ${gatePodName('rack-1', 1)} took over)`);
  });

  it('is the next spare once the first is being deleted too', () => {
    const leaving = { deletionTimestamp: '2026-11-25T10:00:00Z' };
    const next = pod(gatePodName('rack-1', 2));
    const pods = findIn(pod(gateName('rack-1'), leaving), pod(gatePodName('rack-1', 1), leaving), next);
    expect(guardingGatePod('rack-1', pods)).toBe(next);
  });

  it('is the spare alone after the own pod is gone, and nothing once both are', () => {
    const spare = pod(gatePodName('rack-1', 1));
    expect(guardingGatePod('rack-1', findIn(spare))).toBe(spare);
    expect(guardingGatePod('rack-1', findIn())).toBeUndefined();
  });

  it("is no other node's pod", () => {
    expect(
      guardingGatePod('rack-1', findIn(pod(gateName('rack-10')), pod(gatePodName('rack-2', 1)))),
    ).toBeUndefined();
  });
});
