// Story: the agent reads its gate's PDB as the API server writes it back. A real kube-apiserver writes
// map keys (the selector's matchLabels) in sorted order, whatever order drainer sent them in; that is
// the same PDB, not one an operator altered. A changed budget or selector still is.
import { describe, expect, it } from 'vitest';
import { pdbAltered } from '../../src/core/gate/observe.ts';
import { gatePdb, gatePdbSpec } from '../../src/kube/gate.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const NODE = 'realk8s-node-1';
const withSpec = (spec: Record<string, unknown>): KubeObject => ({ ...gatePdb('drainer', NODE), spec });
/** The matchLabels as Go's encoder writes them back: keys in sorted order. */
const sortedLabels = Object.fromEntries(
  Object.entries(gatePdbSpec(NODE).selector.matchLabels).sort(([a], [b]) => a.localeCompare(b)),
);

describe('the gate PDB as the API server shows it', () => {
  it("is not altered when the server writes the selector's labels back in sorted order", () => {
    const asRead = withSpec({ minAvailable: 1, selector: { matchLabels: sortedLabels } });
    expect(Object.keys(sortedLabels)).not.toEqual(Object.keys(gatePdbSpec(NODE).selector.matchLabels));
    expect(pdbAltered(NODE, asRead)).toBe(false);
  });

  it.each([
    ['a budget that allows a disruption', { minAvailable: 0, selector: { matchLabels: sortedLabels } }],
    ['maxUnavailable instead', { maxUnavailable: 0, selector: { matchLabels: sortedLabels } }],
    [
      'a selector without the node label',
      { minAvailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'drainer' } } },
    ],
  ])('is altered with %s', (_what, spec) => {
    expect(pdbAltered(NODE, withSpec(spec))).toBe(true);
  });
});
