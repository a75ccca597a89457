// The closest known name to a mistyped one (edit distance), for "did you mean" in a config file
// and for DRAINER_* variables alike.

/** Edit distance (insertions, deletions, substitutions). */
export function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** The candidate nearest to `name`, with its distance; undefined when there are none. */
export function closest<T>(
  name: string,
  candidates: Iterable<[string, T]>,
): { name: string; value: T; distance: number } | undefined {
  let best: { name: string; value: T; distance: number } | undefined;
  for (const [candidate, value] of candidates) {
    const d = distance(name, candidate);
    if (!best || d < best.distance) best = { name: candidate, value, distance: d };
  }
  return best;
}
