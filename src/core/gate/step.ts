// The drain gate in the reconciler's steps: held while the node is in service or its VMs are on it,
// released the moment every plugin has moved everything (or an operator released it), held again on
// restore, and really holding, before any plugin gives the node back.
import { GATE_RELEASED_ANNOTATION } from '../../kube/gate.ts';
import type { NodeObject } from '../cluster/objects.ts';
import type { Plan } from '../backends/plugin.ts';
import { recordId, type NodeRecord } from '../record/record.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { DrainGate } from './gate.ts';
import { dropNodeAnnotation } from '../agent/drop-annotation.ts';

/**
 * Did every plugin move everything? The outcomes are written the moment the plugins finish; with
 * drain.requirePluginsSucceeded false a node may reach Evacuated with a VM left, and the gate must
 * not open for it. No outcomes yet: the VMs have not left (an Evacuated record always has them,
 * except one an older version wrote).
 */
export const allMoved = (rec: NodeRecord): boolean =>
  rec.outcomes ? rec.outcomes.every((o) => o.succeeded) : rec.phase === 'Evacuated';

/** An operator's release (drainer release): when, and the record (maintenance) it was given for. */
export interface Release {
  readonly at: string;
  /** recordId of the record it was given for (absent: written by an older version, a time only). */
  readonly record?: string;
}

/** The release annotation as written, whatever maintenance it was given for. */
export function releaseOf(node: NodeObject | undefined): Release | undefined {
  const text = node?.metadata?.annotations?.[GATE_RELEASED_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as { at?: unknown; record?: unknown };
    if (typeof v === 'object' && v !== null && typeof v.at === 'string')
      return { at: v.at, ...(typeof v.record === 'string' ? { record: v.record } : {}) };
  } catch {
    // an older version's value: the time only
  }
  return { at: text };
}

/** The annotation's value for a release of this record. */
export const releaseValue = (rec: NodeRecord, at: Date): string =>
  JSON.stringify({ at: at.toISOString(), record: recordId(rec) });

/**
 * When an operator released the gate of THIS maintenance; undefined when the release on the Node
 * was given for another record (a leftover), or the node is being restored (it takes VMs again:
 * the restore holds the gate whatever was released). An older version's release (a time only)
 * counts for the record that began before it.
 */
export function releasedAt(rec: NodeRecord | undefined, node: NodeObject | undefined): string | undefined {
  const r = releaseOf(node);
  if (!r || !rec || rec.phase === 'Restoring') return undefined;
  if (r.record !== undefined) return r.record === recordId(rec) ? r.at : undefined;
  return Date.parse(r.at) >= Date.parse(rec.since) ? r.at : undefined;
}

/** A release on the Node that nothing honours (another maintenance's, or none under way): to be taken off. */
export const staleRelease = (rec: NodeRecord | undefined, node: NodeObject | undefined): boolean =>
  releaseOf(node) !== undefined &&
  (!rec || (rec.phase !== 'Restoring' && releasedAt(rec, node) === undefined));

/** Phases in which moved VMs open the gate (not Queued, not Restoring: the node takes VMs again). */
const OPENS = new Set(['Evacuating', 'Evacuated', 'Failed']);

/**
 * Is the gate to be held? It opens the moment every plugin has moved everything (drainer's own pod
 * drain goes on beside the taker's), or on an operator's release during this maintenance (until the
 * restore). In service (no record) it is always held.
 */
export const gateHeld = (rec: NodeRecord | undefined, node?: NodeObject): boolean =>
  !rec || (releasedAt(rec, node) === undefined && !(OPENS.has(rec.phase) && allMoved(rec)));

/**
 * Actions that leave a workload on the host until it moves (or blocks it there). `stop` too: a
 * server planned for a stop runs (its owner started it again on an Evacuated node), and the
 * declared reboot would kill it.
 */
const STAYS = new Set(['live-migrate', 'cold-migrate', 'confirm-resize', 'notify', 'stop', 'none']);

/** The workloads of the plans still on the host that have to move, by name. */
export const toMove = (plans: readonly Plan[]): string[] =>
  plans.flatMap((p) => p.workloads.filter((w) => STAYS.has(w.action)).map((w) => `${p.plugin}/${w.name}`));

/**
 * The record as a pass that reads it at its start sees it for the gate: an Evacuating record is an
 * evacuation this pass resumes, and its outcomes are an earlier run's (before a restart, a lost
 * slot), which say nothing of servers that landed on the host since: they open nothing until this
 * run's plugins have looked again.
 */
export const readAtPassStart = (rec: NodeRecord | undefined): NodeRecord | undefined =>
  rec?.phase === 'Evacuating' && rec.outcomes ? { ...rec, outcomes: undefined } : rec;

/**
 * The one place the gate is set: what the record says, at every pass and after every write of the
 * record (the DrainGate then keeps it so, whatever happens to its objects). Never awaited: it
 * never sits before a change to Nova.
 */
export function wantGate(
  gate: DrainGate | undefined,
  node: string,
  rec: NodeRecord | undefined,
  obj?: NodeObject,
): void {
  gate?.want(node, gateHeld(rec, obj));
}

/** Makes the gate what the record says, and waits for it (run-once, which ends right after). */
export async function syncGate(run: NodeRun): Promise<void> {
  await run.deps.gate?.set(run.nodeName, gateHeld(run.store.current, run.node));
}

/**
 * On restore, before any plugin gives the node back (nova-compute enabled, taint and cordon off):
 * wait until the gate really holds, at most drainGate.holdTimeout; a longer wait goes on with a
 * warning (the node must come back into service even when the gate image can never run). With
 * `wait` false (a restore that gives nothing back) it is only wanted held.
 */
export async function holdGate(run: NodeRun, wait = true): Promise<void> {
  const gate = run.deps.gate;
  gate?.want(run.nodeName, true);
  if (gate && wait) {
    const timeout = run.deps.config.drainGate?.holdTimeout ?? 120;
    if (!(await gate.whenHeld(run.nodeName, timeout * 1000, run.signal)) && !run.signal.aborted) {
      const why = gate.seen(run.nodeName)?.text ?? 'not held: its objects could not be read';
      await run.event(
        'Warning',
        'DrainGateNotHeld',
        `node ${run.nodeName} given back after waiting ${timeout} s for its drain gate (${why}): drains of it are not held until it holds`,
      );
    }
  }
  // the operator's release ends with this maintenance (and was not honoured since the restore began)
  if (releaseOf(run.node) !== undefined)
    await run.deps.cluster.setNodeAnnotation(run.nodeName, GATE_RELEASED_ANNOTATION, null);
}

/** Takes off a release nothing honours (a leftover of an earlier maintenance); one written since stays. */
export async function dropStaleRelease(run: NodeRun, rec: NodeRecord | undefined): Promise<void> {
  if (staleRelease(rec, run.node))
    await dropNodeAnnotation(run, GATE_RELEASED_ANNOTATION, 'a release of an earlier maintenance');
}

/** drainer's own pod drain leaves the gate pod alone (it is for other drains). */
export const gateSkip = (run: NodeRun, pod: { namespace: string; name: string }): string | undefined =>
  run.deps.gate?.isGatePod(run.nodeName, pod) ? 'the drain gate' : undefined;

/** At Evacuated with a VM left (drain.requirePluginsSucceeded false): the gate stays, and says why. */
export async function explainEvacuated(run: NodeRun): Promise<void> {
  if (!run.deps.gate || !gateHeld(run.store.current, run.node)) return;
  await explainHeld(
    run,
    'evacuated, but not every virtual machine moved (drain.requirePluginsSucceeded is false)',
  );
}

/** Names what holds the drain (at the start of an evacuation, and when one fails). */
export async function explainHeld(run: NodeRun, what: string): Promise<void> {
  if (!run.deps.gate || !gateHeld(run.store.current, run.node)) return;
  // "held" is what the API server shows: a gate seen not holding says so instead
  const seen = run.deps.gate.seen(run.nodeName);
  if (seen && !seen.held) {
    await run.event(
      'Warning',
      'DrainGateNotHeld',
      `drains of ${run.nodeName} should wait (${what}), but its drain gate is ${seen.text}`,
    );
    return;
  }
  await run.event('Warning', 'DrainGateHeld', `drains of ${run.nodeName} wait: ${what}`);
}

const listed = (names: readonly string[]): string =>
  names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${names.length - 10} more` : names.join(', ');

export const stillOnHost = (names: readonly string[]): string =>
  `${names.length} still on the host (${listed(names)})`;
