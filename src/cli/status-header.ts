// The header line of `drainer status`: may evacuations start now? The window state and the next
// opening (from this config's fleet.maintenanceWindows), active freezes, and the blockers firing:
// the fleet's Prometheus verdict (the drainer-blockers Lease while fresh, else Prometheus asked once, as plan does) and the nodes a pod holds.
import type { FleetConfig } from '../config/schema.ts';
import { activeFreezes, nextStart } from '../core/fleet/calendar.ts';
import type { Verdict } from '../core/fleet/shared-verdict.ts';
import { verdictText } from '../core/fleet/verdict-now.ts';
import { anyOpen, inText, localText, nextOpening } from '../core/fleet/window.ts';
import type { FleetRow } from '../core/fleet/fleet-view.ts';

export interface FleetGateView {
  readonly window: string;
  readonly freezes: readonly string[];
  readonly blockers: readonly string[];
}

export function gateView(
  fleet: Pick<FleetConfig, 'maintenanceWindows' | 'freezes'>,
  rows: readonly FleetRow[],
  verdict: Verdict | undefined,
  now: Date,
): FleetGateView {
  const t = now.getTime();
  const ws = fleet.maintenanceWindows;
  // this config may not be the agents': a node that waits for a window says so itself
  const held = rows.find((r) => r.waiting?.kind === 'window');
  let window = held?.waiting
    ? `closed (${held.node}: ${held.waiting.reason})`
    : 'always open (no maintenance windows)';
  if (ws.length && anyOpen(ws, t)) window = 'open';
  else if (ws.length) {
    const next = nextOpening(ws, t);
    window = next
      ? `closed, opens ${localText(next.at, next.window?.timeZone ?? 'UTC')} (in ${inText(next.at - t)})`
      : 'closed, no window opens';
  }
  const freezes = activeFreezes(fleet.freezes, t).map((f) => `${f.reason} until ${f.to}`);
  const start = nextStart({ ...fleet, windowEnd: 'finish-running' }, t);
  if (freezes.length && start !== undefined) freezes.push(`starts may resume in ${inText(start - t)}`);
  const frozen = rows.find((r) => r.waiting?.kind === 'freeze');
  if (!freezes.length && frozen?.waiting) freezes.push(`${frozen.node}: ${frozen.waiting.reason}`);
  const blockers: string[] = [];
  // the words of plan's verdict, so the two commands say one thing
  const prometheus = verdict ? verdictText(verdict) : '';
  if (prometheus) blockers.push(`Prometheus ${prometheus}`);
  const byPods = rows.filter((r) => r.waiting?.kind === 'pods').map((r) => r.node);
  if (byPods.length) blockers.push(`pods hold ${byPods.join(', ')}`);
  return { window, freezes, blockers };
}

/** Cut at spaces into lines of at most `width` (a word longer than that stays whole); the rest indented. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (next.length > width && line.trim()) {
      lines.push(line);
      line = `  ${word}`;
    } else line = next;
  }
  return [...lines, line];
}

/**
 * "window: closed, opens Sat 02:00 Europe/Berlin (in 9 h 12 min) · freezes: none · blockers: none";
 * longer than `width` (an ordinary terminal's 120 columns): one line each, long ones wrapped.
 */
export function headerLine(v: FleetGateView, width = 120): string {
  const parts = [
    `window: ${v.window}`,
    `freezes: ${v.freezes.length ? v.freezes.join('; ') : 'none'}`,
    `blockers: ${v.blockers.length ? v.blockers.join('; ') : 'none firing'}`,
  ];
  const one = parts.join(' · ');
  return one.length <= width ? one : parts.flatMap((p) => wrap(p, width)).join('\n');
}
