// `drainer plan`'s look at windows, freezes and blockers: the agent's own start gate
// (fleet/start-gate.ts), asked once at this instant and read-only. The Prometheus verdict is the
// fleet's shared one (the drainer-blockers Lease) while it is fresh, else Prometheus is asked
// directly: plan never claims the Lease, so it writes nothing.
import type { Config } from '../../config/schema.ts';
import type { KubeClients } from '../../kube/client.ts';
import { gateConfigured, FleetStartGate } from '../fleet/start-gate.ts';
import { kubePodBlocker } from '../fleet/pod-blocker.ts';
import { verdictNow } from '../fleet/verdict-now.ts';
import { startNowAsked } from '../fleet/start-now.ts';
import type { StartVerdict } from '../fleet/types.ts';
import type { MaintenanceWindow } from '../fleet/window.ts';
import type { NodeObject } from '../cluster/objects.ts';
import { parseRecord, resumes, STATE_ANNOTATION } from '../record/record.ts';

/** What the start gate says about the node now: undefined when nothing is configured that could hold it. */
export interface StartCheck {
  /** Held: why, and the config key that holds it. */
  readonly wait?: { readonly kind: string; readonly reason: string; readonly key: string };
  /** Not a hold: start-now asked, an evacuation that began already, the window config. */
  readonly note?: string;
}

/** "sat,sun 02:00–06:00 Europe/Berlin" */
export const windowText = (w: MaintenanceWindow): string =>
  `${w.days.join(',')} ${w.start}–${w.end} ${w.timeZone}`;

const KEYS: Record<string, string> = {
  window: 'fleet.maintenanceWindows',
  freeze: 'fleet.freezes',
  prometheus: 'fleet.blockers.prometheus',
  pods: 'fleet.blockers.podSelector',
};

function held(v: Extract<StartVerdict, { open: false }>, config: Config): StartCheck['wait'] {
  const ws = config.fleet.maintenanceWindows;
  // the window by its config, then when it opens (the agent's words after the first "; ")
  const named =
    v.kind === 'window'
      ? `outside the maintenance window (fleet.maintenanceWindows: ${ws.map(windowText).join(', ')}); ${v.reason.slice(v.reason.indexOf('; ') + 2)}`
      : v.reason;
  return { kind: v.kind, reason: named, key: KEYS[v.kind] ?? 'fleet' };
}

/**
 * Would the node's agent start it now? Exactly the agent's gate: the calendar first, then
 * Prometheus, then the node's blocking pods; a start-now annotation or an evacuation that began
 * already is never held.
 */
export async function checkStart(o: {
  readonly k: KubeClients;
  readonly config: Config;
  readonly node: string;
  readonly nodeObject: NodeObject | undefined;
  readonly now: Date;
  readonly signal: AbortSignal;
}): Promise<StartCheck | undefined> {
  const fleet = o.config.fleet;
  if (!gateConfigured(fleet, fleet.blockers)) return undefined;
  const asked = startNowAsked(o.nodeObject, undefined, o.now);
  if (asked) return { note: `start-now asked by ${asked.by}: windows, freezes and blockers do not hold it` };
  const rec = parseRecord(o.nodeObject?.metadata?.annotations?.[STATE_ANNOTATION], o.now);
  if (rec && (rec.phase !== 'Queued' || resumes(rec)))
    return { note: `the evacuation began already (phase ${rec.phase}): windows and blockers do not stop it` };
  const gate = new FleetStartGate({
    calendar: fleet,
    intervalMs: fleet.blockers.interval * 1000,
    now: () => o.now,
    ...(fleet.blockers.prometheus
      ? { prometheus: { get: (signal: AbortSignal) => verdictNow(o.k, fleet, signal) } }
      : {}),
    ...(fleet.blockers.podSelector
      ? { pods: kubePodBlocker(o.k, fleet.blockers.podSelector), podSelector: fleet.blockers.podSelector }
      : {}),
  });
  const queuedAt = rec?.queuedAt ? new Date(rec.queuedAt) : o.now;
  const v = await gate.check({ node: o.node, queuedAt, signal: o.signal });
  if (v.open) return { note: 'windows, freezes and blockers allow a start now' };
  return { wait: held(v, o.config) };
}
