// drainer doctor names each deleted Cluster API Machine waiting on drainer's pre-drain hook that no
// agent will take off: its node has no live agent, or it names no node of the cluster. With the one
// command that lets Cluster API go on. An operator finding.
import { describe, expect, it } from 'vitest';
import { machineHooksWithoutAgent } from '../../src/invariants/rules/machine-hook-agent.ts';
import { OPERATOR_FINDINGS } from '../../src/invariants/violation.ts';
import type { World, WorldMachine } from '../../src/invariants/world.ts';
import { liveAgent, node, OPTS, world } from './world.ts';

const machine = (more: Partial<WorldMachine> = {}): WorldMachine => ({
  namespace: 'fleet',
  name: 'hv-1',
  node: 'node-1',
  deleting: true,
  hooked: true,
  ...more,
});

const findings = (w: Partial<World>) =>
  machineHooksWithoutAgent(world({ nodes: [node('node-1')], ...w }), OPTS);

describe("deleted Machines waiting on drainer's hook with no agent", () => {
  it('its node has no agent: named, with the command that takes the hook off', () => {
    const [v, ...more] = findings({ leases: [], machines: [machine()] });
    expect(more).toEqual([]);
    expect(v).toMatchObject({ id: 'machine-hook-without-agent', object: 'machine/fleet/hv-1' });
    expect(v?.evidence).toMatch(/its node node-1 has no agent running/);
    expect(v?.fix).toContain(
      'kubectl annotate machines.cluster.x-k8s.io -n fleet hv-1 pre-drain.delete.hook.machine.cluster.x-k8s.io/drainer-',
    );
    expect(OPERATOR_FINDINGS.has('machine-hook-without-agent')).toBe(true);
  });

  it('a live agent will take it off; a Machine not deleted, or without the hook, waits on nothing', () => {
    expect(findings({ leases: [liveAgent('node-1')], machines: [machine()] })).toEqual([]);
    expect(
      findings({ leases: [], machines: [machine({ deleting: false }), machine({ hooked: false })] }),
    ).toEqual([]);
  });

  it('names a Machine whose node is no node of this cluster', () => {
    expect(findings({ leases: [], machines: [machine({ node: 'node-9' })] })[0]?.evidence).toMatch(
      /names no node of this cluster/,
    );
  });
});
