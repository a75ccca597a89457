// The longest chain of requests a client waited for, from their start and end instants: a request
// that started after another ended may have waited for it, so it counts one more; requests issued
// side by side (each started before the others ended) count once.
export interface TimedRequest {
  readonly start: number;
  readonly end: number;
}

export function longestChain(requests: readonly TimedRequest[]): number {
  const sorted = [...requests].sort((a, b) => a.start - b.start);
  const depth: number[] = [];
  let longest = 0;
  sorted.forEach((r, i) => {
    let before = 0;
    for (let j = 0; j < i; j++) {
      const q = sorted[j];
      if (q && q.end <= r.start) before = Math.max(before, depth[j] ?? 0);
    }
    depth[i] = before + 1;
    longest = Math.max(longest, before + 1);
  });
  return longest;
}
