// The start gate: the calendar (windows, freezes), then the blockers (the fleet's Prometheus
// verdict, this node's blocking pods). A blocker that cannot be evaluated holds, with its error:
// a blocker that fails open is not a blocker.
import { activeFreezes, calendarVerdict, nextStart, type CalendarConfig } from './calendar.ts';
import type { PodBlocker } from './pod-blocker.ts';
import type { SharedVerdict } from './shared-verdict.ts';
import type { GateState, StartGate, StartVerdict } from './types.ts';
import { anyOpen } from './window.ts';
import { verdictText } from './verdict-now.ts';

export interface FleetStartGateOptions {
  readonly calendar: CalendarConfig;
  /** The fleet's shared verdict (the agent), or a read-only look (`drainer plan`). */
  readonly prometheus?: Pick<SharedVerdict, 'get'>;
  readonly pods?: PodBlocker;
  readonly podSelector?: string;
  readonly intervalMs: number;
  readonly now: () => Date;
  /** Longest sleep between two checks (a clock change heals); tests shorten it. */
  readonly maxSleepMs?: number;
  /** Each time the picture changes (metrics). */
  readonly onState?: (s: GateState) => void;
}

/** Is anything configured that could hold a start? */
export const gateConfigured = (
  c: CalendarConfig,
  blockers: { prometheus?: unknown; podSelector?: string },
): boolean =>
  c.maintenanceWindows.length > 0 || c.freezes.length > 0 || !!blockers.prometheus || !!blockers.podSelector;

export class FleetStartGate implements StartGate {
  readonly #o: FleetStartGateOptions;
  #blockers: Record<string, string | undefined> = {};

  constructor(o: FleetStartGateOptions) {
    this.#o = o;
    this.#blockers = {
      ...(o.prometheus ? { prometheus: '' } : {}),
      ...(o.pods ? { pods: '' } : {}),
    };
  }

  async check(o: { node: string; queuedAt: Date; signal: AbortSignal }): Promise<StartVerdict> {
    const now = this.#o.now().getTime();
    const cal = calendarVerdict(this.#o.calendar, now, o.queuedAt.getTime());
    if (!cal.open) {
      this.#publish();
      return cal;
    }
    const held = (await this.#prometheus(o.signal)) ?? (await this.#pods(o.node));
    this.#publish();
    return held ?? { open: true };
  }

  async #prometheus(signal: AbortSignal): Promise<StartVerdict | undefined> {
    if (!this.#o.prometheus) return undefined;
    const v = await this.#o.prometheus.get(signal).catch((err: unknown) => ({
      at: 0,
      firing: [] as string[],
      error: err instanceof Error ? err.message : String(err),
    }));
    this.#blockers.prometheus = verdictText(v);
    if (!this.#blockers.prometheus) return undefined;
    return { open: false, kind: 'prometheus', reason: `blocked: Prometheus ${this.#blockers.prometheus}` };
  }

  async #pods(node: string): Promise<StartVerdict | undefined> {
    if (!this.#o.pods) return undefined;
    let pods: string[];
    try {
      pods = await this.#o.pods(node);
    } catch (err) {
      const text = `pods matching ${this.#o.podSelector ?? ''} cannot be listed: ${err instanceof Error ? err.message : String(err)}`;
      this.#blockers.pods = text;
      return { open: false, kind: 'pods', reason: `blocked: ${text}` };
    }
    this.#blockers.pods = pods.length ? pods.join(', ') : '';
    if (!pods.length) return undefined;
    return {
      open: false,
      kind: 'pods',
      reason: `blocked by pod${pods.length > 1 ? 's' : ''} on the node matching ${this.#o.podSelector ?? ''}: ${pods.join(', ')}`,
    };
  }

  recheckMs(v: StartVerdict): number {
    const cap = this.#o.maxSleepMs ?? 60_000;
    if (v.open) return 0;
    if (v.kind === 'window' || v.kind === 'freeze') {
      // nothing to ask: sleep until the calendar allows it (no requests while waiting)
      const left = v.until === undefined ? cap : v.until - this.#o.now().getTime();
      return Math.max(10, Math.min(cap, left));
    }
    return Math.max(10, Math.min(cap, this.#o.intervalMs));
  }

  state(): GateState {
    const now = this.#o.now().getTime();
    const c = this.#o.calendar;
    const next = nextStart(c, now);
    return {
      windowOpen: anyOpen(c.maintenanceWindows, now),
      ...(next !== undefined && next !== now ? { nextOpening: next } : {}),
      freezes: activeFreezes(c.freezes, now).map((f) => `${f.reason} until ${f.to}`),
      blockers: { ...this.#blockers },
    };
  }

  #publish(): void {
    this.#o.onState?.(this.state());
  }
}
