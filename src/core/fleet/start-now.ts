// "Start now, on purpose": `drainer start <node> --now` sets drainer.dev/start-now on the Node
// (JSON {by, at}); a NodeMaintenance asks the same with the annotation on itself. The agent
// honours it once, past windows, freezes and blockers (never past the budget), records who and
// when, and removes the Node's annotation.
import { START_NOW_ANNOTATION } from '../../names.ts';
import type { MaintenanceObject, NodeObject } from '../cluster/objects.ts';

export { START_NOW_ANNOTATION };

export interface StartNow {
  readonly by: string;
  readonly at: string;
  /** 'node' (remove the annotation once honoured) or the NodeMaintenance's name */
  readonly from: 'node' | 'maintenance';
}

/** The value the CLI writes. */
export const startNowValue = (by: string, at: Date): string => JSON.stringify({ by, at: at.toISOString() });

function parse(
  text: string | undefined,
  from: StartNow['from'],
  fallbackBy: string,
  now: Date,
): StartNow | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as { by?: unknown; at?: unknown };
    if (typeof v === 'object' && v !== null)
      return {
        by: typeof v.by === 'string' && v.by ? v.by : fallbackBy,
        at: typeof v.at === 'string' && !Number.isNaN(Date.parse(v.at)) ? v.at : now.toISOString(),
        from,
      };
  } catch {
    // a plain value ("true", a name) asks too
  }
  return { by: text && text !== 'true' ? text : fallbackBy, at: now.toISOString(), from };
}

/** Does the Node (or the NodeMaintenance that triggers) ask to start now? */
export function startNowAsked(
  node: NodeObject | undefined,
  nm: MaintenanceObject | undefined,
  now: Date,
): StartNow | undefined {
  return (
    parse(node?.metadata?.annotations?.[START_NOW_ANNOTATION], 'node', 'unknown', now) ??
    parse(
      nm?.metadata?.annotations?.[START_NOW_ANNOTATION],
      'maintenance',
      `NodeMaintenance/${nm?.metadata?.name ?? ''}`,
      now,
    )
  );
}
