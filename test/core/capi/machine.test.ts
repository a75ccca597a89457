// drainer's side of Cluster API's pre-drain hook, one look at a time (src/core/capi/machine.ts).
import { describe, expect, it } from 'vitest';
import {
  hookStep,
  machineOfNode,
  MACHINE_DELETING_ANNOTATION,
  PRE_DRAIN_HOOK,
  type MachineObject,
} from '../../../src/core/capi/machine.ts';
import type { NodeObject } from '../../../src/core/cluster/objects.ts';
import { STATE_ANNOTATION } from '../../../src/core/record/record.ts';

const machine = (o: { hook?: boolean; deleting?: boolean; node?: string } = {}): MachineObject => ({
  metadata: {
    name: 'hv-a',
    namespace: 'fleet',
    annotations: o.hook ? { [PRE_DRAIN_HOOK]: 'drainer' } : {},
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  status: { nodeRef: { name: o.node ?? 'node-a' } },
});

const node = (annotations: Record<string, string> = {}): NodeObject => ({
  metadata: { name: 'node-a', annotations },
});
const record = (phase: string) =>
  JSON.stringify({ version: 1, phase, trigger: 'Machine/fleet/hv-a', since: '2026-01-01T00:00:00Z' });
const marked = (more: Record<string, string> = {}) =>
  node({ [MACHINE_DELETING_ANNOTATION]: 'fleet/hv-a', ...more });

describe("Cluster API's pre-drain hook, held by drainer", () => {
  it("finds the node's Machine by status.nodeRef", () => {
    const other = machine({ node: 'node-b' });
    expect(machineOfNode([other, machine()], 'node-a')?.status?.nodeRef?.name).toBe('node-a');
    expect(machineOfNode([other], 'node-a')).toBeUndefined();
  });

  it('puts its hook on a Machine that is not deleted, and never on one being deleted', () => {
    expect(hookStep({ enabled: true, node: node(), machine: machine() })).toEqual({ kind: 'add' });
    expect(hookStep({ enabled: true, node: node(), machine: machine({ hook: true }) }).kind).toBe('none');
    expect(hookStep({ enabled: true, node: marked(), machine: machine({ deleting: true }) }).kind).toBe(
      'none',
    );
  });

  it("marks the Node when its Machine is deleted (the maintenance's trigger)", () => {
    expect(
      hookStep({ enabled: true, node: node(), machine: machine({ hook: true, deleting: true }) }),
    ).toEqual({
      kind: 'mark',
      value: 'fleet/hv-a',
    });
  });

  it('keeps the hook while the node evacuates, and takes it off once Evacuated', () => {
    const m = machine({ hook: true, deleting: true });
    expect(
      hookStep({ enabled: true, node: marked({ [STATE_ANNOTATION]: record('Evacuating') }), machine: m })
        .kind,
    ).toBe('none');
    expect(
      hookStep({ enabled: true, node: marked({ [STATE_ANNOTATION]: record('Evacuated') }), machine: m }),
    ).toEqual({
      kind: 'remove',
      why: 'the node is Evacuated',
    });
  });

  it('on Failed the hook stays, and the message names the command that lets Cluster API go on', () => {
    const m = machine({ hook: true, deleting: true });
    const step = hookStep({
      enabled: true,
      node: marked({ [STATE_ANNOTATION]: record('Failed') }),
      machine: m,
    });
    expect(step.kind).toBe('failed');
    expect(step.kind === 'failed' && step.message).toContain(
      `kubectl annotate machines.cluster.x-k8s.io -n fleet hv-a ${PRE_DRAIN_HOOK}-`,
    );
  });

  it('with the hook turned off it takes its hook away and drops a mark, so no Machine waits on it', () => {
    expect(hookStep({ enabled: false, node: node(), machine: machine({ hook: true }) }).kind).toBe('remove');
    expect(hookStep({ enabled: false, node: marked(), machine: machine({ deleting: true }) })).toEqual({
      kind: 'mark',
      value: null,
    });
  });

  it('drops the mark once no deleted Machine names the node (it was deleted, or the Node registered again)', () => {
    expect(hookStep({ enabled: true, node: marked(), machine: undefined })).toEqual({
      kind: 'mark',
      value: null,
    });
  });
});
