// Recurring maintenance windows in wall-clock time of an IANA zone, with Intl only (no time zone
// library): a window is open while the zone's local weekday and time fall inside it, so DST shifts
// the instant, never the wall-clock hours. An end at or before the start crosses midnight, and then
// belongs to the day it started on. A start that does not exist (a spring-forward gap) opens at
// the transition; a window wholly inside the gap (Berlin Sun 02:00-03:00 on the spring-forward
// day) opens at the transition for its usual length, so no week loses its window. An hour that
// happens twice (fall back) is inside the window both times.

export const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Day = (typeof DAYS)[number];

export interface MaintenanceWindow {
  readonly days: readonly Day[];
  /** "HH:MM", local time in timeZone */
  readonly start: string;
  /** "HH:MM" ("24:00" allowed); at or before start: crosses midnight */
  readonly end: string;
  readonly timeZone: string;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

export const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
};

const formats = new Map<string, Intl.DateTimeFormat>();
function format(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, f);
  }
  return f;
}

/** Is the name an IANA zone this runtime knows? */
export function validTimeZone(timeZone: string): boolean {
  try {
    format(timeZone);
    return true;
  } catch {
    return false;
  }
}

interface Local {
  readonly day: number;
  readonly minute: number;
  /** the local wall time as if it were UTC, ms (for the zone offset) */
  readonly wall: number;
}

function local(t: number, timeZone: string): Local {
  const p: Record<string, string> = {};
  for (const x of format(timeZone).formatToParts(new Date(t))) p[x.type] = x.value;
  const day = DAYS.indexOf((p.weekday ?? '').slice(0, 3).toLowerCase() as Day);
  const hour = Number(p.hour) % 24;
  const wall = Date.UTC(
    Number(p.year),
    Number(p.month) - 1,
    Number(p.day),
    hour,
    Number(p.minute),
    Number(p.second),
  );
  return { day, minute: hour * 60 + Number(p.minute), wall: wall + (t % 1000) };
}

const offset = (t: number, timeZone: string): number => local(t, timeZone).wall - t;

/** Is this one window open at instant t? */
export function windowOpen(w: MaintenanceWindow, t: number): boolean {
  const l = local(t, w.timeZone);
  return wallOpen(w, l) || inGapOpen(w, t, l.wall - t);
}

function wallOpen(w: MaintenanceWindow, { day, minute }: Local): boolean {
  const start = minutesOf(w.start);
  const end = minutesOf(w.end);
  const has = (d: number) => w.days.includes(DAYS[(d + 7) % 7]!);
  if (end > start) return has(day) && minute >= start && minute < end;
  // crosses midnight: the evening of a listed day, or the morning after it
  return (has(day) && minute >= start) || (has(day - 1) && minute < end);
}

/** The window's length in minutes (one that crosses midnight runs into the next day). */
function lengthOf(w: MaintenanceWindow): number {
  const start = minutesOf(w.start);
  const end = minutesOf(w.end);
  return end > start ? end - start : end + 1440 - start;
}

/**
 * Open at t because the window lies wholly inside a spring-forward gap that ended within its
 * length before t: it never happens on the wall clock, so it runs from the transition for its
 * usual length. (A window that only starts in the gap is open on the wall clock from the change.)
 */
function inGapOpen(w: MaintenanceWindow, t: number, offsetAtT: number): boolean {
  const len = lengthOf(w) * MINUTE;
  const before = offset(t - len, w.timeZone);
  if (offsetAtT <= before) return false; // no clock moved forward within the window's length
  const change = transitions(w.timeZone, t - len, t + 1).find((c) => c <= t && t < c + len);
  if (change === undefined) return false;
  // the gap in wall time: [gapStart, gapEnd), the wall clock at the change being its end
  const gapEnd = local(change, w.timeZone).wall;
  const gapStart = gapEnd - (offset(change, w.timeZone) - offset(change - MINUTE, w.timeZone));
  const start = minutesOf(w.start) * MINUTE;
  for (const date of new Set([gapStart, gapEnd - 1].map((x) => Math.floor(x / DAY) * DAY))) {
    const s = date + start;
    const listed = w.days.includes(DAYS[new Date(date).getUTCDay()]!);
    if (listed && s >= gapStart && s + len <= gapEnd) return true;
  }
  return false;
}

/** Open when no windows are configured, or any one is open. */
export const anyOpen = (ws: readonly MaintenanceWindow[], t: number): boolean =>
  ws.length === 0 || ws.some((w) => windowOpen(w, t));

/** Instants at which the zone's offset changes between from and to (zones change on a whole minute). */
function transitions(timeZone: string, from: number, to: number): number[] {
  const out: number[] = [];
  const last = Math.ceil(to / MINUTE) * MINUTE;
  let a = Math.floor(from / MINUTE) * MINUTE;
  let atA = offset(a, timeZone);
  for (; a < last; a += DAY / 4) {
    const b = Math.min(a + DAY / 4, last);
    const atB = offset(b, timeZone);
    if (atA !== atB) out.push(changeBetween(timeZone, a, b, atA));
    atA = atB;
  }
  return out;
}

/** The minute in (lo, hi] at which the offset stops being `atLo`. */
function changeBetween(timeZone: string, lo: number, hi: number, atLo: number): number {
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE || lo + MINUTE;
    if (offset(mid, timeZone) === atLo) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * How far ahead a window is looked for: a weekly window opens within 7 days (8 with a DST change
 * between); two weeks leave room to spare. Beyond it: no window (one with no days).
 */
const HORIZON_DAYS = 15;

/**
 * The next instant after t (or t itself) at which a window is open, and that window; undefined
 * when none opens within HORIZON_DAYS. Candidates are every window's start on the coming days,
 * in both offsets around it, and the zone's transitions (a start in a gap).
 */
export function nextOpening(
  ws: readonly MaintenanceWindow[],
  t: number,
): { at: number; window?: MaintenanceWindow } | undefined {
  if (anyOpen(ws, t)) return { at: t, ...(ws.length ? { window: ws.find((w) => windowOpen(w, t)) } : {}) };
  const found: { at: number; window: MaintenanceWindow }[] = [];
  const horizon = t + HORIZON_DAYS * DAY;
  for (const w of ws) {
    const start = minutesOf(w.start);
    const today = Math.floor(local(t, w.timeZone).wall / DAY) * DAY;
    const candidates = transitions(w.timeZone, t, horizon);
    for (let d = 0; d <= HORIZON_DAYS; d++) {
      const wall = today + d * DAY + start * MINUTE;
      for (const o of new Set([offset(wall - DAY, w.timeZone), offset(wall + DAY, w.timeZone)]))
        candidates.push(wall - o);
    }
    const opens = candidates
      .filter((c) => c > t && c <= horizon && windowOpen(w, c))
      .sort((a, b) => a - b)[0];
    if (opens !== undefined) found.push({ at: opens, window: w });
  }
  return found.sort((a, b) => a.at - b.at)[0];
}

/** "Sat 02:00 Europe/Berlin" */
export function localText(t: number, timeZone: string): string {
  const l = local(t, timeZone);
  const day = DAYS[l.day] ?? 'sun';
  const hh = String(Math.floor(l.minute / 60)).padStart(2, '0');
  const mm = String(l.minute % 60).padStart(2, '0');
  return `${day[0]!.toUpperCase()}${day.slice(1)} ${hh}:${mm} ${timeZone}`;
}

/** "9 h 12 min", "3 min", "2 d 4 h" (rounded up to the minute) */
export function inText(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / MINUTE));
  const d = Math.floor(total / 1440);
  const h = Math.floor((total % 1440) / 60);
  const m = total % 60;
  if (d) return `${d} d${h ? ` ${h} h` : ''}`;
  if (h) return `${h} h${m ? ` ${m} min` : ''}`;
  return `${m} min`;
}
