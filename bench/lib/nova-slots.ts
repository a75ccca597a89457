// Nova's own time for a host's live migrations, from its records: a migration is Nova's from its
// record's created_at (the scheduler's pick and pre-checks are Nova's work) to its updated_at at
// `completed`, less any wait in the source's queue: submitted ahead, it is Nova's only from when the
// slot before it freed. Slots are told apart by when each migration's compute work began (the
// destination's pre_live_migration event): Nova's executor hands a freed worker to the next queued
// migration. The evacuator's gap is between a slot freeing and the next record's created_at.
import { idealMakespan, percentile } from './stats.ts';

export interface SlotWork {
  /** The record's created_at (ms since the epoch, Nova's clock). */
  readonly created: number;
  /** When the migration's compute work began (ms, Nova's clock). */
  readonly start: number;
  /** Its record's updated_at at `completed` (ms). */
  readonly end: number;
}

export interface SlotFigures {
  /** max(Σ Nova's durations / M, longest), in ms: no evacuation through Nova's M slots ends sooner. */
  readonly limitMs: number;
  /** The evacuator's: a slot's end to the next created_at in that slot, 0 if it was queued (ms). */
  readonly gapsMs: number[];
  /** Nova's own: a slot's end to the next compute work in it (ms). */
  readonly handoffMs: number[];
  readonly gapP50Ms: number;
  readonly gapMaxMs: number;
}

/**
 * The limit and the gaps. A start takes the slot freed most recently before it; the first M starts
 * have no slot before them.
 */
export function slotFigures(work: readonly SlotWork[], slots: number): SlotFigures {
  const ordered = [...work].sort((a, b) => a.start - b.start);
  const free: number[] = Array<number>(slots).fill(-Infinity);
  const durations: number[] = [];
  const gapsMs: number[] = [];
  const handoffMs: number[] = [];
  for (const w of ordered) {
    // the latest end not after this start; else (Nova's clock jitter) the earliest end
    let pick = -1;
    for (let i = 0; i < free.length; i++)
      if (free[i]! <= w.start && (pick < 0 || free[i]! > free[pick]!)) pick = i;
    if (pick < 0) pick = free.indexOf(Math.min(...free));
    const freed = free[pick]!;
    durations.push(w.end - Math.max(w.created, freed));
    if (Number.isFinite(freed)) {
      gapsMs.push(Math.max(0, w.created - freed));
      handoffMs.push(w.start - freed);
    }
    free[pick] = w.end;
  }
  return {
    limitMs: idealMakespan(durations, slots),
    gapsMs,
    handoffMs,
    gapP50Ms: gapsMs.length ? percentile(gapsMs, 50) : 0,
    gapMaxMs: gapsMs.length ? Math.max(...gapsMs) : 0,
  };
}
