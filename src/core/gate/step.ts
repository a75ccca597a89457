// The drain gate in the reconciler's steps: held while the node is in service or evacuating,
// released the moment the record says Evacuated (or an operator released it), held again on
// restore before any plugin gives the node back. Each step is one line in evacuate/restore.
import { GATE_RELEASED_ANNOTATION } from '../../kube/gate.ts';
import type { NodeObject } from '../objects.ts';
import type { Plan } from '../plugin.ts';
import type { NodeRecord } from '../record.ts';
import type { NodeRun } from '../run-context.ts';

/**
 * Did every plugin move everything? Evacuated normally says so; with drain.requirePluginsSucceeded
 * false a node may reach Evacuated with a VM left, and the gate must not open for it.
 */
export const allMoved = (rec: NodeRecord): boolean => (rec.outcomes ?? []).every((o) => o.succeeded);

/** When an operator released the node's gate (drainer release); honoured only while a record exists. */
export const releasedAt = (node: NodeObject | undefined): string | undefined =>
  node?.metadata?.annotations?.[GATE_RELEASED_ANNOTATION];

/**
 * Is the gate to be held? Only Evacuated with every VM moved, or an operator's release during this
 * maintenance (until the restore), opens it. In service (no record) it is always held.
 */
export const gateHeld = (rec: NodeRecord | undefined, node?: NodeObject): boolean =>
  !rec || (releasedAt(node) === undefined && !(rec.phase === 'Evacuated' && allMoved(rec)));

/** Actions that leave a workload on the host until it moves (or blocks it there). */
const STAYS = new Set(['live-migrate', 'cold-migrate', 'confirm-resize', 'notify', 'none']);

/** The workloads of the plans still on the host that have to move, by name. */
export const toMove = (plans: readonly Plan[]): string[] =>
  plans.flatMap((p) => p.workloads.filter((w) => STAYS.has(w.action)).map((w) => `${p.plugin}/${w.name}`));

/** Makes the gate what the record says. Held: awaited; so a restore re-arms before a plugin restores. */
export async function syncGate(run: NodeRun): Promise<void> {
  await run.deps.gate?.set(run.nodeName, gateHeld(run.store.current, run.node));
}

/** On restore, before the node takes VMs again (an operator's release ends here too). */
export async function holdGate(run: NodeRun): Promise<void> {
  if (!run.deps.gate) return;
  await run.deps.gate.set(run.nodeName, true);
  // the operator's release ends with this maintenance
  if (releasedAt(run.node) !== undefined)
    await run.deps.cluster.setNodeAnnotation(run.nodeName, GATE_RELEASED_ANNOTATION, null);
}

/** drainer's own pod drain leaves the gate pod alone (it is for other drains). */
export const gateSkip = (run: NodeRun, pod: { namespace: string; name: string }): string | undefined =>
  run.deps.gate?.isGatePod(run.nodeName, pod) ? 'the drain gate' : undefined;

/** At Evacuated: every VM has left, the drain may go on. */
export async function releaseGate(run: NodeRun): Promise<void> {
  const gate = run.deps.gate;
  if (!gate) return;
  if (gateHeld(run.store.current, run.node)) {
    await syncGate(run);
    await explainHeld(
      run,
      'evacuated, but not every virtual machine moved (drain.requirePluginsSucceeded is false)',
    );
    return;
  }
  await gate.set(run.nodeName, false);
  await run.event(
    'Normal',
    'DrainGateReleased',
    `drain gate released: no virtual machine left on ${run.nodeName}`,
  );
}

/** Names what holds the drain (at the start of an evacuation, and when one fails). */
export async function explainHeld(run: NodeRun, what: string): Promise<void> {
  if (!run.deps.gate || !gateHeld(run.store.current, run.node)) return;
  await run.event('Warning', 'DrainGateHeld', `drains of ${run.nodeName} wait: ${what}`);
}

const listed = (names: readonly string[]): string =>
  names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${names.length - 10} more` : names.join(', ');

export const stillOnHost = (names: readonly string[]): string =>
  `${names.length} still on the host (${listed(names)})`;
