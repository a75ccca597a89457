// Polling with generous deadlines: the real API is slow and variable, so tests wait for states,
// never for durations.
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
}

/** Calls `probe` until it returns a value other than undefined; throws naming `what` and the last seen state. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  { what, timeoutMs = 180_000, intervalMs = 1_000 }: WaitOptions,
  describeLast?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}${describeLast ? `: ${describeLast()}` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}
