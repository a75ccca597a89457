// When may an evacuation start, by the calendar alone: inside a maintenance window (none: always)
// and outside every freeze. Pure: the instant comes in, the verdict and the next start go out.
import { anyOpen, inText, localText, nextOpening, type MaintenanceWindow } from './window.ts';

export interface Freeze {
  readonly from: string;
  readonly to: string;
  readonly reason: string;
}

export interface CalendarConfig {
  readonly maintenanceWindows: readonly MaintenanceWindow[];
  readonly freezes: readonly Freeze[];
  readonly windowEnd: 'finish-running' | 'start-queued';
}

export type CalendarVerdict =
  | { readonly open: true }
  | {
      readonly open: false;
      readonly kind: 'window' | 'freeze';
      /** "outside the maintenance window; opens Sat 02:00 Europe/Berlin (in 9 h 12 min)" */
      readonly reason: string;
      /** The earliest instant it may start (undefined: no window ever opens). */
      readonly until?: number;
    };

const activeFreeze = (fs: readonly Freeze[], t: number): Freeze | undefined =>
  fs.find((f) => Date.parse(f.from) <= t && t < Date.parse(f.to));

/** The freezes active at t, for status and metrics. */
export const activeFreezes = (fs: readonly Freeze[], t: number): Freeze[] =>
  fs.filter((f) => Date.parse(f.from) <= t && t < Date.parse(f.to));

/**
 * The first instant from t on when a window is open and no freeze holds (undefined: never within
 * the windows' horizon). Freezes may overlap each other and windows: each is stepped over in turn.
 */
export function nextStart(c: CalendarConfig, t: number): number | undefined {
  let at = t;
  for (let i = 0; i < 64; i++) {
    const f = activeFreeze(c.freezes, at);
    if (f) {
      at = Date.parse(f.to);
      continue;
    }
    const o = nextOpening(c.maintenanceWindows, at);
    if (!o) return undefined;
    if (o.at === at) return at;
    at = o.at;
  }
  return undefined;
}

/**
 * May a node start at `now`? `queuedAt`: when it began waiting; with windowEnd start-queued a node
 * that queued inside a window may still start after the window closed (never inside a freeze).
 */
export function calendarVerdict(c: CalendarConfig, now: number, queuedAt?: number): CalendarVerdict {
  const f = activeFreeze(c.freezes, now);
  const windowOk =
    anyOpen(c.maintenanceWindows, now) ||
    (c.windowEnd === 'start-queued' && queuedAt !== undefined && anyOpen(c.maintenanceWindows, queuedAt));
  if (!f && windowOk) return { open: true };
  const until = nextStart(c, now);
  const when = until === undefined ? 'no maintenance window opens' : whenText(c, until, now);
  if (f) return { open: false, kind: 'freeze', reason: `frozen (${f.reason}) until ${f.to}; ${when}`, until };
  return { open: false, kind: 'window', reason: `outside the maintenance window; ${when}`, until };
}

function whenText(c: CalendarConfig, until: number, now: number): string {
  const w = nextOpening(c.maintenanceWindows, until)?.window;
  const at = localText(until, w?.timeZone ?? 'UTC');
  return `opens ${at} (in ${inText(until - now)})`;
}
