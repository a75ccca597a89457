// drainer doctor names each VirtualMachine drainer stopped and marked (drainer.dev/stopped) that no
// agent will start: the node its mark names has no live agent, or is no node of the cluster any
// more. With the one command that starts it and takes the mark off. An operator finding.
import { describe, expect, it } from 'vitest';
import { vmStopMarksWithoutAgent } from '../../src/invariants/rules/vm-stop-mark-agent.ts';
import { OPERATOR_FINDINGS } from '../../src/invariants/violation.ts';
import type { World, WorldVm } from '../../src/invariants/world.ts';
import { liveAgent, node, OPTS, world } from './world.ts';

const marked = (more: Partial<WorldVm> = {}, runStrategy = 'Always'): WorldVm => ({
  namespace: 'vms',
  name: 'db-1',
  mark: JSON.stringify({ node: 'node-1', at: '2026-11-25T09:00:00.000Z', runStrategy, vmi: 'u1' }),
  running: false,
  ...more,
});

const findings = (w: Partial<World>) =>
  vmStopMarksWithoutAgent(world({ nodes: [node('node-1')], ...w }), OPTS);

describe('marked VirtualMachines no agent will start', () => {
  it('stopped for a node whose agent is gone: named, with the command that starts it and takes the mark off', () => {
    const [v, ...more] = findings({ leases: [], vms: [marked()] });
    expect(more).toEqual([]);
    expect(v).toMatchObject({ id: 'vm-stop-mark-without-agent', object: 'virtualmachine/vms/db-1' });
    expect(v?.evidence).toBe(
      "VirtualMachine vms/db-1 carries drainer's stop mark (stopped for node node-1 at 2026-11-25T09:00:00.000Z) and does not run; its node node-1 has no agent running (no live Lease): no agent will start it",
    );
    expect(v?.fix).toBe(
      'virtctl start db-1 -n vms && kubectl label vm db-1 -n vms drainer.dev/stopped- && kubectl annotate vm db-1 -n vms drainer.dev/stopped-',
    );
    expect(OPERATOR_FINDINGS.has('vm-stop-mark-without-agent')).toBe(true);
  });

  it('stopped for a node that is gone for good', () => {
    expect(findings({ leases: [liveAgent('node-2')], nodes: [node('node-2')], vms: [marked()] })).toEqual([
      expect.objectContaining({
        evidence: expect.stringMatching(/its node node-1 is no node of this cluster any more/),
      }),
    ]);
  });

  it('a runStrategy Once VM is started by its strategy, as drainer would', () => {
    expect(findings({ leases: [], vms: [marked({}, 'Once')] })[0]?.fix).toMatch(
      /^kubectl patch vm db-1 -n vms --type merge -p '\{"spec":\{"runStrategy":"Once"\}\}' && /,
    );
  });

  it.each([
    ['its node has a live agent', { leases: [liveAgent('node-1')], vms: [marked()] }],
    ['it runs (its owner started it)', { leases: [], vms: [marked({ running: true })] }],
    ['its mark does not read', { leases: [], vms: [marked({ mark: 'not json' })] }],
    ['the agents were not read', { vms: [marked()] }],
  ])('nothing when %s', (_what, w) => {
    expect(findings(w)).toEqual([]);
  });
});
