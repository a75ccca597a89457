// The host's own shutdown (logind's PrepareForShutdown, src/logind) is a trigger: the agent marks its Node
// with drainer.dev/shutdown, and the node is evacuated for it until the mark comes off after boot.
import { describe, expect, it } from 'vitest';
import { desiredState } from '../../src/core/agent/desired.ts';
import type { NodeObject } from '../../src/core/cluster/objects.ts';
import { newRecord } from '../../src/core/record/record.ts';
import { SHUTDOWN_ANNOTATION, SHUTDOWN_TRIGGER } from '../../src/core/shutdown/mark.ts';

const node = (unschedulable: boolean, marked: boolean): NodeObject => ({
  metadata: {
    name: 'n1',
    ...(marked ? { annotations: { [SHUTDOWN_ANNOTATION]: '2026-11-28T05:00:00Z' } } : {}),
  },
  spec: { unschedulable },
});

const desired = (n: NodeObject, cordonedByUs = false) =>
  desiredState({
    nodeName: 'n1',
    node: n,
    maintenances: [],
    record: cordonedByUs ? { ...newRecord('shutdown', new Date(0)), cordonedByUs: true } : undefined,
    mode: 'own',
  });

describe('desired state on a host shutdown', () => {
  it('evacuates a schedulable node whose host is going down, naming the shutdown as trigger', () => {
    expect(desired(node(false, true))).toEqual({ state: 'Evacuated', trigger: SHUTDOWN_TRIGGER });
  });

  it('keeps the node evacuated for the shutdown through the cordon drainer made for it', () => {
    expect(desired(node(true, true), true)).toEqual({ state: 'Evacuated', trigger: SHUTDOWN_TRIGGER });
  });

  it('is back in service once the mark is gone (after boot) and the only cordon is ours', () => {
    expect(desired(node(true, false), true)).toEqual({ state: 'InService' });
  });

  it("leaves an operator's cordon the trigger once the mark is gone", () => {
    expect(desired(node(true, false))).toEqual({ state: 'Evacuated', trigger: 'cordon' });
  });
});
