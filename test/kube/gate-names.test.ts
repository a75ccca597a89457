// The gate's object names and selector come from the node's name so that no two nodes ever share
// them, whatever the names: a spare pod never takes another node's gate name, and two long names
// with the same start keep two selectors (each PDB guards its own node's pod only).
import { describe, expect, it } from 'vitest';
import { gateLabelValue, gateName, gatePodName, gateSelector, isGatePodName } from '../../src/kube/gate.ts';

const long = 'rack-12-hypervisor-with-a-very-long-name-given-by-the-cloud-provider-';
const NODES = [
  'hv-1',
  'hv-1-b',
  'hv-1-b-b',
  `${long}0001`,
  `${long}0002`,
  `${'a'.repeat(240)}.example.com`,
  `${'a'.repeat(240)}.example.org`,
  'x',
];

/** A node's gate pod and its first spares (one more each time all before are being deleted). */
const podNames = (node: string) => Array.from({ length: 12 }, (_, i) => gatePodName(node, i));

/** A DNS subdomain, as the API server wants object names. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A label value. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

describe('gate names', () => {
  it('no two nodes share a pod name, a PDB name or a selector', () => {
    const pods = NODES.flatMap(podNames);
    expect(new Set(pods).size).toBe(pods.length);
    const pdbs = NODES.map(gateName);
    expect(new Set(pdbs).size).toBe(pdbs.length);
    const selectors = NODES.map(gateSelector);
    expect(new Set(selectors).size).toBe(selectors.length);
  });

  it('the spare of hv-1 is not the gate of hv-1-b', () => {
    expect(gatePodName('hv-1', 1)).not.toBe(gateName('hv-1-b'));
  });

  it("each node knows its own pods and spares, and no other node's", () => {
    for (const n of NODES)
      for (const name of podNames(n))
        expect(NODES.filter((m) => isGatePodName(m, name)).map((m) => m.slice(0, 20))).toEqual([
          n.slice(0, 20),
        ]);
    // only the names made for a spare: the first is -b as before (an upgraded agent knows it), then -b2 …
    expect(gatePodName('hv-1', 1)).toBe(`${gateName('hv-1')}-b`);
    expect(gatePodName('hv-1', 2)).toBe(`${gateName('hv-1')}-b2`);
    for (const odd of ['-b1', '-b02', '-bb', '-c'])
      expect(isGatePodName('hv-1', `${gateName('hv-1')}${odd}`)).toBe(false);
  });

  it('every name fits the API server (253, a DNS subdomain) and every label value 63', () => {
    for (const n of NODES) {
      for (const name of podNames(n)) {
        expect(name.length).toBeLessThanOrEqual(253);
        expect(name).toMatch(SUBDOMAIN);
      }
      expect(gateLabelValue(n).length).toBeLessThanOrEqual(63);
      expect(gateLabelValue(n)).toMatch(LABEL_VALUE);
    }
  });

  it('the same node always gets the same names (a restarted agent finds its gate)', () => {
    expect(podNames('hv-1')).toEqual(podNames('hv-1'));
    expect(gateName('hv-1')).toMatch(/^drainer-gate-hv-1-[0-9a-f]{10}$/);
  });
});
