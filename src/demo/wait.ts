// The demo's waits in real time: polling what the sandbox shows until a condition holds, the
// time is up or the signal aborts (Ctrl-C), and the agents' first sync.
import type { DemoAgents } from './agents.ts';

export interface WaitOptions {
  readonly signal: AbortSignal;
  /** Real seconds a wait may take. */
  readonly timeoutSeconds: number;
  /** Real milliseconds between reads. */
  readonly tickMs?: number;
}

export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((done) => {
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), done()), { once: true });
  });

/** Reads until `until` holds on what was read, the time is up or the signal aborts. */
export async function pollUntil<T>(
  o: WaitOptions,
  read: () => T,
  until: (t: T) => boolean,
): Promise<{ value: T; reached: boolean }> {
  const end = Date.now() + o.timeoutSeconds * 1000;
  for (;;) {
    const value = read();
    if (until(value)) return { value, reached: true };
    if (Date.now() > end || o.signal.aborted) return { value, reached: false };
    await sleep(o.tickMs ?? 200, o.signal);
  }
}

export async function waitReady(agents: DemoAgents, o: WaitOptions): Promise<void> {
  const { reached } = await pollUntil({ ...o, tickMs: 25 }, () => agents.ready(), Boolean);
  if (!reached) throw new Error('the agents did not sync their watches in time');
}
