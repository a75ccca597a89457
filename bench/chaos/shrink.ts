// The shortest schedule that still fails: drop chunks of steps (halves, then quarters … then single
// steps, as delta debugging does) and keep a removal whenever the rest still fails. Each try is a
// whole soak run, so the search is bounded in time and in tries; what it has when time is up is
// still a failing schedule, only perhaps not the shortest.

export interface ShrinkResult<T> {
  readonly steps: T[];
  readonly tries: number;
  /** False when time or tries ran out before single steps were tried. */
  readonly complete: boolean;
}

export interface ShrinkOptions {
  /** Stop trying at this time (ms since epoch, the `now` below). */
  readonly deadline: number;
  readonly maxTries?: number;
  readonly now?: () => number;
}

export async function shrink<T>(
  failing: readonly T[],
  fails: (steps: T[]) => Promise<boolean>,
  o: ShrinkOptions,
): Promise<ShrinkResult<T>> {
  const now = o.now ?? Date.now;
  const maxTries = o.maxTries ?? Infinity;
  let steps = [...failing];
  let tries = 0;
  let chunk = Math.max(1, Math.floor(steps.length / 2));
  const out = (complete: boolean): ShrinkResult<T> => ({ steps, tries, complete });
  for (;;) {
    let removed = false;
    for (let at = 0; at < steps.length;) {
      if (now() >= o.deadline || tries >= maxTries) return out(false);
      const candidate = [...steps.slice(0, at), ...steps.slice(at + chunk)];
      tries++;
      if (candidate.length > 0 && (await fails(candidate))) {
        steps = candidate;
        removed = true;
      } else at += chunk;
    }
    if (chunk === 1 && !removed) return out(true);
    if (!removed) chunk = Math.max(1, Math.floor(chunk / 2));
    else chunk = Math.min(chunk, Math.max(1, Math.floor(steps.length / 2)));
  }
}
