// Small Worlds for the invariants' tables: a node, its record, its gate, Nova's servers and moves.
import { gateName } from '../../src/kube/gate.ts';
import type { CheckOptions, World, WorldNode } from '../../src/invariants/world.ts';
import { readRecord } from '../../src/core/record/record.ts';

export const OPTS: CheckOptions = {
  disabledReasonPrefix: 'drainer:',
  budget: 1,
  namespace: 'drainer',
  gate: true,
  ownsMaintenances: true,
  agentLeaseDuration: 15,
};

export const AT = new Date('2026-11-25T10:00:00Z');

/** A node with a record (an object: JSON of it) or none. */
export function node(name: string, record?: object, more: Partial<WorldNode> = {}): WorldNode {
  return {
    name,
    unschedulable: record !== undefined,
    record: readRecord(record ? JSON.stringify(record) : undefined),
    annotations: {},
    labels: {},
    ...more,
  };
}

export const rec = (phase: string, more: object = {}) => ({
  phase,
  trigger: 'cordon',
  since: AT.toISOString(),
  plugins: { nova: { host: 'host-a', serviceId: 1, disabledByUs: true, reason: 'drainer: cordon' } },
  ...more,
});

/** A gate that holds: its PDB allows 0 disruptions, its pod Running and Ready on the node. */
export const holdingGate = (n: string) => ({
  gatePods: [{ name: gateName(n), nodeName: n, phase: 'Running', ready: true, deleting: false }],
  gatePdbs: [{ name: gateName(n), disruptionsAllowed: 0, observed: true }],
});

export const liveAgent = (n: string) => ({
  name: `drainer-node-${n}`,
  component: 'node-agent',
  holder: `${n}-pod/uid`,
  renewTime: new Date(AT.getTime() - 2000).toISOString(),
  durationSeconds: 15,
});

export function world(w: Partial<World> = {}): World {
  return { at: AT, nodes: [], maintenances: [], gatePods: [], gatePdbs: [], events: [], ...w };
}
