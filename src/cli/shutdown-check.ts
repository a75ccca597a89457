// `drainer plan`'s shutdown line (issue 49 item 3): logind's InhibitDelayMaxUSec read on the host's
// system bus (on the node, or in the agent's pod, which mounts it), against the estimate of this node's
// evacuation (core/shutdown/check.ts). Off (shutdown.enabled false): no line.
import type { Config } from '../config/schema.ts';
import type { Plan } from '../core/backends/plugin.ts';
import { shutdownCheck } from '../core/shutdown/check.ts';
import { openBus } from '../logind/bus.ts';
import { inhibitDelayMaxMs } from '../logind/watch.ts';

/** Ways out that move a running VM (a stop or a skip takes no time of logind's). */
const MOVES = new Set(['live-migrate', 'cold-migrate', 'notify']);
/** A bus that does not answer in this time is taken as none: plan never waits on it. */
const BUS_MS = 1000;

/** logind's cap in ms, or why it could not be read. */
export async function readDelayMax(socketPath: string): Promise<number | string> {
  const signal = AbortSignal.timeout(BUS_MS);
  const timedOut = new Promise<string>((resolve) =>
    signal.addEventListener('abort', () => resolve(`no answer on ${socketPath} in 1 s`), { once: true }),
  );
  const read = async () => {
    const bus = await openBus(socketPath, signal).catch(() => undefined);
    if (!bus) return `no system bus at ${socketPath}`;
    try {
      return await inhibitDelayMaxMs(bus);
    } catch (err) {
      return `no logind on ${socketPath}: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      bus.close();
    }
  };
  return Promise.race([read(), timedOut]);
}

/** The one line ("warning: …" when the time is short), or undefined when the check is off. */
export async function shutdownLine(config: Config, plans: readonly Plan[]): Promise<string | undefined> {
  if (!config.shutdown.enabled) return undefined;
  const vms = plans.flatMap((p) => p.workloads.filter((w) => MOVES.has(w.action) && !w.presence));
  const r = shutdownCheck({
    delayMaxMs: vms.length ? await readDelayMax(config.shutdown.busSocket) : 0,
    vms,
    rateMiBps: config.shutdown.migrationRate,
    atOnce: config.nova.maxConcurrentMigrations,
    marginSeconds: config.shutdown.releaseMargin,
  });
  return r.short ? `warning: ${r.line}` : r.line;
}
