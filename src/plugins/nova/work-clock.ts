// The host's working time: real time weighted by the share of its slots that can end a migration
// soon. A slot held by a migration parked until its stall decision (or its forced end) ends nothing
// for minutes; measured on this clock, the gap between ends is the same with or without busy guests,
// so the pace neither learns a gap stretched by them nor polls for ends a parked slot will not make.

/** From `at` on, working time runs at `rate` (working slots over all slots), starting from `work`. */
interface Segment {
  readonly at: number;
  readonly work: number;
  readonly rate: number;
}

/** Segments kept: an end is dated back at most to the poll before the one that saw it. */
const KEPT = 4;

export class WorkClock {
  readonly #segments: Segment[] = [];

  /** The share of the slots working from `at` on (0…1). */
  set(at: number, working: number, of: number): void {
    const rate = of > 0 ? Math.min(1, Math.max(0, working / of)) : 1;
    const last = this.#segments.at(-1);
    if (last && at <= last.at) {
      this.#segments[this.#segments.length - 1] = { ...last, rate };
      return;
    }
    this.#segments.push({ at, work: this.workAt(at), rate });
    if (this.#segments.length > KEPT) this.#segments.shift();
  }

  /** The share working now (1 before anything is known). */
  get rate(): number {
    return this.#segments.at(-1)?.rate ?? 1;
  }

  /** Working time at `t`; before the first segment kept, real time from it. */
  workAt(t: number): number {
    const segs = this.#segments;
    if (segs.length === 0) return t;
    let seg = segs[0]!;
    for (const s of segs) if (s.at <= t) seg = s;
    return seg.work + (t - seg.at) * (t < seg.at ? 1 : seg.rate);
  }
}
