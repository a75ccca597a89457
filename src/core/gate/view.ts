// The drain gate of a node as `drainer status` says it: from the node's record what it should be,
// and, when status has read them, from the gate objects what the API server shows (held means the
// PDB is observed with no disruption allowed and the gate pod is Running and Ready).
import { gateName, isGatePodName } from '../../kube/gate.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { NodeObject } from '../cluster/objects.ts';
import type { NodeRecord } from '../record/record.ts';
import type { GateObjects } from './api.ts';
import { effectivePod, isOpen, seeHeld } from './observe.ts';
import { allMoved, gateHeld, releasedAt } from './step.ts';
import { vmsText } from '../backends/vm-count.ts';

/** The VMs on the host as the plugins last reported them; undefined before any report (or an older record). */
function onHostText(rec: NodeRecord): string | undefined {
  const counts = Object.values(rec.progress ?? {});
  if (!counts.length || counts.some((p) => p.onHost === undefined)) return undefined;
  const n = counts.reduce((sum, p) => sum + (p.onHost ?? 0), 0);
  return vmsText(
    n,
    counts.reduce((sum, p) => sum + (p.stopped ?? 0), 0),
  );
}

/** What should hold, said from the record: `held (3 of 7 VMs left)`, `held: evacuation Failed: <reason>`. */
function heldText(rec: NodeRecord | undefined): string {
  if (!rec) return 'held';
  const here = onHostText(rec);
  if (rec.phase === 'Evacuated' && !allMoved(rec))
    return `held: evacuated with ${here ? `${here} on the host` : 'virtual machines left'}`;
  if (rec.phase === 'Failed') {
    // the whole reason: the table cuts its columns (not -o wide), JSON and YAML keep it
    const why = (rec.failureReason ?? rec.lastError ?? 'unknown').replace(/\s+/g, ' ');
    return `held${here ? ` (${here} on the host)` : ''}: evacuation Failed: ${why}`;
  }
  if (here) return `held (${here} on the host)`;
  const counts = Object.values(rec.progress ?? {});
  if (!counts.length) return 'held';
  const total = counts.reduce((n, p) => n + p.total, 0);
  const left = counts.reduce((n, p) => n + p.total - p.moved, 0);
  return `held (${left} of ${total} VMs left)`;
}

/**
 * The DRAIN GATE column. Without `objs` (not read) it says what the record wants; with them, a gate
 * that should hold and does not says `not held: <why>`.
 */
export function gateText(rec: NodeRecord | undefined, node?: NodeObject, objs?: GateObjects): string {
  if (releasedAt(rec, node) !== undefined) return 'released (drainer release)';
  if (!gateHeld(rec, node)) return !objs || isOpen(objs) ? 'released' : 'releasing';
  if (!objs) return heldText(rec);
  const seen = seeHeld(node?.metadata?.name ?? '', objs);
  return seen.held ? heldText(rec) : seen.text;
}

/** The gate objects status listed (pods and PDBs labelled as the gate's), by node name. */
export function gateObjectsByNode(
  nodes: readonly string[],
  pods: readonly KubeObject[],
  pdbs: readonly KubeObject[],
): Map<string, GateObjects> {
  const pdb = new Map(pdbs.map((p) => [p.metadata.name ?? '', p]));
  const podOf = (n: string) => effectivePod(pods.filter((p) => isGatePodName(n, p.metadata.name ?? '')));
  return new Map(nodes.map((n) => [n, { pod: podOf(n), pdb: pdb.get(gateName(n)) }]));
}
