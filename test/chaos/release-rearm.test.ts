// Story: an operator's forced release opened hv-1's gate with VMs left on it; then its Node was
// deleted and registered again, which ended the maintenance the release was given in. The new Node
// has no gate until its agent sees it and the kubelet runs the gate pod, so a drain that returns in
// that moment went through the operator's opening (chaos seed 3 round 37). The release excuses it
// until the gate is seen holding again, and never longer than REARM_MS: a gate that does not come
// back is drainer's broken promise.
import { describe, expect, it } from 'vitest';
import { judged, lapseAtRearm, REARM_MS, withAgentBack, withReleases } from '../../bench/chaos/check.ts';
import type { DrainReturn } from '../../bench/chaos/drains.ts';
import { GateWatch, type GateSource } from '../../bench/chaos/gate-watch.ts';
import { GATE_NODE_LABEL, gateLabelValue, gateName } from '../../src/kube/gate.ts';

const NS = 'drainer';
const BOUND = REARM_MS * 20;

/** The API server's pod changes, pushed by hand on a clock set by hand. */
function cluster() {
  let cb: Parameters<GateSource['subscribe']>[1] = () => undefined;
  let now = 0;
  const gates = new GateWatch(
    { subscribe: (_res, f) => ((cb = f), () => undefined), now: () => now },
    { namespace: NS, nodes: ['hv-1', 'hv-2'] },
  );
  const pod = (node: string, phase: string, ready: boolean, name = gateName(node)) => ({
    metadata: { name, namespace: NS, labels: { [GATE_NODE_LABEL]: gateLabelValue(node) } },
    status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
  return {
    gates,
    at: (t: number) => (now = t),
    running: (node: string) => cb('MODIFIED', pod(node, 'Running', true)),
    pending: (node: string) => cb('ADDED', pod(node, 'Pending', false)),
    deleted: (node: string) => cb('DELETED', pod(node, 'Running', true)),
  };
}

const drainOfHv1 = (returnedAt: number): DrainReturn => ({
  node: 'hv-1',
  kind: 'karpenter',
  round: 37,
  ok: true,
  onHost: { occupying: ['server hv-1-vm1', 'server hv-1-vm2'], stopped: [] },
  startedWith: 6,
  contradicted: false,
  released: false,
  ms: 100,
  startedAt: returnedAt - 100,
  returnedAt,
});

// released at 2000 in the maintenance that ended at 10_000, when the Node was registered again
const release = { node: 'hv-1', from: 2000, until: 10_000 };

describe("an operator's release after its maintenance ended with the Node", () => {
  it('excuses a drain that returned before the new gate held, not one after', () => {
    const c = cluster();
    c.at(1000);
    c.running('hv-1');
    c.at(2000);
    c.deleted('hv-1'); // drainer release --force
    c.at(10_050);
    c.pending('hv-1'); // the agent made the gate again for the new Node
    c.at(10_400);
    c.running('hv-1');
    const lapse = lapseAtRearm(c.gates, BOUND);

    expect(judged(withReleases(drainOfHv1(10_200), [release], lapse))).toBe(false);
    expect(judged(withReleases(drainOfHv1(10_500), [release], lapse))).toBe(true);
  });

  it('a gate that never comes back excuses nothing past REARM_MS', () => {
    const c = cluster();
    c.at(1000);
    c.running('hv-1');
    c.at(2000);
    c.deleted('hv-1');
    c.at(10_000 + 2 * BOUND);
    c.running('hv-2'); // another node's gate says nothing of hv-1's
    const lapse = lapseAtRearm(c.gates, BOUND);

    expect(judged(withReleases(drainOfHv1(10_000 + BOUND - 1), [release], lapse))).toBe(false);
    expect(judged(withReleases(drainOfHv1(10_000 + BOUND + 1), [release], lapse))).toBe(true);
  });

  it('a maintenance that ended with its gate holding (a restore) excuses nothing after its end', () => {
    const c = cluster();
    c.at(1000);
    c.running('hv-1'); // the restore held the gate before its record went
    const lapse = lapseAtRearm(c.gates, BOUND);

    expect(judged(withReleases(drainOfHv1(10_001), [release], lapse))).toBe(true);
  });

  it('without the gates observed, the excuse ends with the maintenance', () => {
    expect(judged(withReleases(drainOfHv1(10_001), [release]))).toBe(true);
    expect(judged(withReleases(drainOfHv1(9_999), [release]))).toBe(false);
  });
});

// The same opening by another of the operator's hands: hv-1's agent taken off with nothing on the node
// (its gate went with it), then put back. Nova placed servers there meanwhile; the new agent makes the
// gate a moment after it starts, and a drain that returns before that went through the operator's
// opening (chaos seed 4 round 178: Karpenter's drain returned 0.1 s after the agent came back).
describe('an agent the operator took off an empty node, then put back', () => {
  const back = 10_000;
  const returned = (at: number): DrainReturn => ({ ...drainOfHv1(at), agentBackAt: back });

  it('excuses a drain that returned before its gate held, not one after', () => {
    const c = cluster();
    c.at(back + 300);
    c.pending('hv-1');
    c.at(back + 700);
    c.running('hv-1');
    const lapse = lapseAtRearm(c.gates, BOUND);

    expect(judged(withAgentBack(returned(back + 100), lapse))).toBe(false);
    expect(judged(withAgentBack(returned(back + 800), lapse))).toBe(true);
  });

  it('a gate that never comes back excuses nothing past REARM_MS', () => {
    const lapse = lapseAtRearm(cluster().gates, BOUND);

    expect(judged(withAgentBack(returned(back + BOUND - 1), lapse))).toBe(false);
    expect(judged(withAgentBack(returned(back + BOUND + 1), lapse))).toBe(true);
  });

  it('a node whose agent never went (no agentBackAt) is judged', () => {
    const lapse = lapseAtRearm(cluster().gates, BOUND);

    expect(judged(withAgentBack(drainOfHv1(back + 100), lapse))).toBe(true);
  });
});
