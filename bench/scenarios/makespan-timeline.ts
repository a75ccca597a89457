// What a makespan run saw happen on the Nova emulation: when each migration was accepted, took a slot,
// completed and its server moved; where the run's time went; and the drainer's requests by kind.
import type { ScaledClock } from '../../src/sandbox/clock.ts';
import type { OpenStackSandbox, StateEvent } from '../../src/sandbox/openstack/index.ts';

// The emulation's fixed costs around the memory copy (its defaults, stated here so the bound is explicit).
export const TIMINGS = { scheduleMs: 1000, prepareMs: 300, postMigrationMs: 200 };

/** The drainer's request kinds, for the breakdown. */
export function kindOf(method: string, path: string): string {
  const p = path.split('?')[0] ?? '';
  if (p.startsWith('/v3')) return 'keystone';
  if (method === 'POST' && p.endsWith('/action')) return 'action';
  if (p.endsWith('/servers/detail')) return path.includes('changes-since') ? 'changes' : 'list';
  if (/\/servers\/[^/]+$/.test(p)) return 'get-server';
  if (p.includes('/os-services')) return 'services';
  if (p.includes('/os-hypervisors')) return 'hypervisors';
  return 'other';
}

export class Timeline {
  readonly accepted = new Map<string, number>();
  readonly preparing = new Map<string, number>();
  readonly completed = new Map<string, number>();
  readonly moved = new Map<string, number>();
  readonly #clock: ScaledClock;
  readonly #source: string;

  constructor(clock: ScaledClock, source: string) {
    this.#clock = clock;
    this.#source = source;
  }

  observe(e: StateEvent): void {
    const now = this.#clock.now();
    if (e.kind === 'migration') {
      const id = e.migration.serverId;
      const at = { accepted: this.accepted, preparing: this.preparing, completed: this.completed }[
        e.migration.status as 'accepted' | 'preparing' | 'completed'
      ];
      if (at && !at.has(id)) at.set(id, now);
    } else if (e.kind === 'server' && e.server.host !== this.#source && !this.moved.has(e.server.id)) {
      this.moved.set(e.server.id, now);
    }
  }
}

/** Where a run's time went (simulated ms): before the first slot, slots idle between, after the last move. */
export interface Phases {
  readonly firstSlotMs: number;
  readonly idleMs: number;
  readonly tailMs: number;
}

/** Slot-time the host left idle from the first slot to the last move, and the run's two ends. */
export function phasesOf(t: Timeline, slots: number, start: number, end: number): Phases {
  const events = [
    ...[...t.preparing.values()].map((at) => ({ at, d: 1 })),
    ...[...t.completed.values()].map((at) => ({ at, d: -1 })),
  ].sort((a, b) => a.at - b.at || a.d - b.d);
  const first = events[0]?.at ?? start;
  const lastMove = Math.max(first, ...t.moved.values());
  let busy = 0;
  let prev = first;
  let idle = 0;
  for (const e of events) {
    const at = Math.min(e.at, lastMove);
    idle += Math.max(0, slots - busy) * Math.max(0, at - prev);
    prev = Math.max(prev, at);
    busy += e.d;
  }
  return { firstSlotMs: first - start, idleMs: idle / slots, tailMs: end - lastMove };
}

export const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** For each moved server: from its switch to the new host to drainer's next poll (which saw it). */
export function noticeDelays(openstack: OpenStackSandbox, t: Timeline): number[] {
  const polls = openstack.requestLog
    .filter((r) => r.method === 'GET' && (r.path.split('?')[0] ?? '').endsWith('/servers/detail'))
    .map((r) => r.at);
  return [...t.moved.values()].flatMap((at) => {
    const seen = polls.find((p) => p >= at);
    return seen === undefined ? [] : [seen - at];
  });
}
