// drainer doctor names the fleet tools that would delete a node with VMs on it: a Cluster API
// Machine's nodeDrainTimeout (not while drainer's hook is on it) or a Karpenter NodePool's
// terminationGracePeriod shorter than drainer's own deadlines let the node's evacuation take.
import { describe, expect, it } from 'vitest';
import { drainTimeoutsShort } from '../../src/invariants/rules/drain-timeouts.ts';
import { OPERATOR_FINDINGS } from '../../src/invariants/violation.ts';
import type { World, WorldMachine, WorldServer } from '../../src/invariants/world.ts';
import { node, OPTS, world } from './world.ts';

const deadlines = { novaAtOnce: 1, novaEach: 1800, kubevirtEach: 150 };
const servers = (n: number): WorldServer[] =>
  Array.from({ length: n }, (_, i) => ({ id: `s${i}`, name: `vm-${i}`, host: 'node-1', status: 'ACTIVE' }));
const nova = (n: number) => ({
  services: [{ host: 'node-1', status: 'enabled', disabledReason: null }],
  servers: servers(n),
  migrations: [],
});
const machine = (more: Partial<WorldMachine> = {}): WorldMachine => ({
  namespace: 'fleet',
  name: 'hv-1',
  node: 'node-1',
  deleting: false,
  hooked: false,
  drainTimeoutSeconds: 300,
  ...more,
});
const findings = (w: Partial<World>) =>
  drainTimeoutsShort(world({ nodes: [node('node-1')], nova: nova(3), ...w }), { ...OPTS, deadlines });

describe('fleet tools whose timeouts are shorter than the evacuation', () => {
  it("a Machine's nodeDrainTimeout of 5m against 3 servers at 30m each: named, with what to change", () => {
    const [v, ...more] = findings({ machines: [machine()] });
    expect(more).toEqual([]);
    expect(v).toMatchObject({ id: 'drain-timeout-short', object: 'node/node-1' });
    expect(v?.evidence).toBe(
      "Cluster API: Machine fleet/hv-1 has nodeDrainTimeout 5m, shorter than this node's evacuation may take (1h30m: 3 nova VMs, 1 at a time, up to 30m each): Cluster API would delete the node with VMs on it",
    );
    expect(v?.fix).toMatch(/clusterAPI\.preDrainHook: true/);
    expect(OPERATOR_FINDINGS.has('drain-timeout-short')).toBe(true);
  });

  it("not with drainer's hook on the Machine, not on an empty host, not without a timeout", () => {
    expect(findings({ machines: [machine({ hooked: true })] })).toEqual([]);
    expect(findings({ machines: [machine()], nova: nova(0) })).toEqual([]);
    expect(findings({ machines: [machine({ drainTimeoutSeconds: 0 })] })).toEqual([]);
  });

  it("a Karpenter NodePool's terminationGracePeriod, for the nodes labelled with it", () => {
    const labelled = { ...node('node-1'), labels: { 'karpenter.sh/nodepool': 'hv' } };
    const pools = [{ name: 'hv', terminationGracePeriodSeconds: 600 }];
    expect(findings({ nodes: [labelled], nodePools: pools })[0]?.evidence).toMatch(
      /^Karpenter: NodePool hv has terminationGracePeriod 10m, shorter than/,
    );
    expect(findings({ nodePools: pools })).toEqual([]);
  });
});
