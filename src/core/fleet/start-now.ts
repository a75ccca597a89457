// "Start now, on purpose": `drainer start <node> --now` sets drainer.dev/start-now on the Node
// (JSON {by, at, record}); a NodeMaintenance asks the same with the annotation on itself. The agent
// honours it once, past windows, freezes and blockers (never past the budget), records who and
// when, and removes the Node's annotation. It belongs to one maintenance: the record it was given
// for (none: the node was in service, the next record), and it is taken off whenever it can no
// longer be honoured (the evacuation began, the node is back in service), so it never outlives it.
import { START_NOW_ANNOTATION } from '../../names.ts';
import type { MaintenanceObject, NodeObject } from '../cluster/objects.ts';
import type { NodeRun } from '../agent/run-context.ts';
import { dropNodeAnnotation } from '../agent/drop-annotation.ts';
import { recordId, resumes, type NodeRecord } from '../record/record.ts';

export { START_NOW_ANNOTATION };

export interface StartNow {
  readonly by: string;
  readonly at: string;
  /** recordId of the record it was given for (absent: asked while the node was in service). */
  readonly record?: string;
  /** 'node' (remove the annotation once honoured) or the NodeMaintenance's name */
  readonly from: 'node' | 'maintenance';
}

/** The value the CLI writes: bound to the node's record, if it has one. */
export const startNowValue = (by: string, at: Date, rec?: NodeRecord): string =>
  JSON.stringify({ by, at: at.toISOString(), ...(rec ? { record: recordId(rec) } : {}) });

function parse(
  text: string | undefined,
  from: StartNow['from'],
  fallbackBy: string,
  now: Date,
): StartNow | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as { by?: unknown; at?: unknown; record?: unknown };
    if (typeof v === 'object' && v !== null)
      return {
        by: typeof v.by === 'string' && v.by ? v.by : fallbackBy,
        at: typeof v.at === 'string' && !Number.isNaN(Date.parse(v.at)) ? v.at : now.toISOString(),
        ...(typeof v.record === 'string' ? { record: v.record } : {}),
        from,
      };
  } catch {
    // a plain value ("true", a name) asks too
  }
  return { by: text && text !== 'true' ? text : fallbackBy, at: now.toISOString(), from };
}

/** Was it given for another record than this one? */
const otherRecord = (asked: StartNow | undefined, rec: NodeRecord | undefined): boolean =>
  asked?.record !== undefined && rec !== undefined && asked.record !== recordId(rec);

/**
 * Does the Node (or the NodeMaintenance that triggers) ask to start now? The Node's ask counts for
 * the record it was given for only (`rec`: the node's record, when there is one).
 */
export function startNowAsked(
  node: NodeObject | undefined,
  nm: MaintenanceObject | undefined,
  now: Date,
  rec?: NodeRecord,
): StartNow | undefined {
  const own = parse(node?.metadata?.annotations?.[START_NOW_ANNOTATION], 'node', 'unknown', now);
  return (
    (otherRecord(own, rec) ? undefined : own) ??
    parse(
      nm?.metadata?.annotations?.[START_NOW_ANNOTATION],
      'maintenance',
      `NodeMaintenance/${nm?.metadata?.name ?? ''}`,
      now,
    )
  );
}

/**
 * A start-now on the Node that can no longer be honoured: the node is in service with no record
 * (it survived an uncordon), its evacuation began already or is over, or it was given for another
 * record.
 */
export function staleStartNow(node: NodeObject, rec: NodeRecord | undefined, inService: boolean): boolean {
  const text = node.metadata?.annotations?.[START_NOW_ANNOTATION];
  if (text === undefined) return false;
  if (!rec) return inService;
  if (resumes(rec) || rec.phase === 'Evacuated' || rec.phase === 'Restoring') return true;
  return otherRecord(parse(text, 'node', 'unknown', new Date()), rec);
}

/** Takes a stale start-now off the Node (one written since stays). */
export async function dropStaleStartNow(
  run: NodeRun,
  rec: NodeRecord | undefined,
  inService: boolean,
): Promise<void> {
  if (staleStartNow(run.node, rec, inService))
    await dropNodeAnnotation(run, START_NOW_ANNOTATION, 'nothing is left for it to start');
}
