// Polling helpers for the bench (real time).

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls until check answers truthy; throws naming what never happened. */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 30_000,
  everyMs = 2,
): Promise<NonNullable<Awaited<T>>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * Waits until `count` (requests logged so far) has not grown for `quietMs`: the agents' start-up
 * (their watches, the drain gates coming to hold) is over, and what follows is the scenario's.
 */
export async function quiet(
  what: string,
  count: () => number,
  quietMs: number,
  timeoutMs = 30_000,
): Promise<void> {
  let last = count();
  let since = Date.now();
  await until(
    what,
    () => {
      const n = count();
      if (n !== last) [last, since] = [n, Date.now()];
      return Date.now() - since >= quietMs;
    },
    timeoutMs,
    50,
  );
}
