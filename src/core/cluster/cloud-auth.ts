// Can the agent still sign in to its clouds? Checked at start and then once per resync, with at
// most one request per plugin (a valid token is reused). A rejection makes /readyz answer 503 with
// one line that says so, and sets drainer_cloud_auth_ok to 0, so a wrong password shows at once
// instead of at the next cordon. Only a rejection counts: an unreachable Keystone is an outage,
// not a wrong secret, and leaves the last verdict as it was.
import { isAuthError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { BackendPlugin } from '../backends/plugin.ts';

export interface CloudAuthOptions {
  readonly plugins: readonly BackendPlugin[];
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** Between two checks (the resync interval). */
  readonly intervalMs: number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Called with each verdict (the metric). */
  readonly onVerdict?: (plugin: string, ok: boolean) => void;
}

export class CloudAuth {
  readonly #o: CloudAuthOptions;
  /** plugin → the one-line reason it is failing. */
  readonly #failing = new Map<string, string>();
  #checked = false;

  constructor(o: CloudAuthOptions) {
    this.#o = o;
  }

  /** One line per plugin whose cloud rejected the credentials. */
  reasons(): string[] {
    if (!this.#checked && this.#o.plugins.some((p) => p.checkAuth !== undefined))
      return ['cloud credentials not checked yet'];
    return [...this.#failing.values()];
  }

  /** One round of checks. */
  async check(): Promise<void> {
    const { plugins, signal, log } = this.#o;
    await Promise.all(
      plugins.map(async (p) => {
        if (p.checkAuth === undefined) return;
        try {
          await p.checkAuth(signal);
          if (this.#failing.delete(p.name))
            log.info({ plugin: p.name }, `${p.name}: cloud credentials accepted again`);
          this.#o.onVerdict?.(p.name, true);
        } catch (err) {
          if (signal.aborted) return;
          if (!isAuthError(err)) {
            log.warn({ plugin: p.name, err }, `${p.name}: could not check the cloud credentials`);
            return;
          }
          const line = `${p.name}: cloud authentication failed: ${err.message}`;
          if (this.#failing.get(p.name) !== line) log.error({ plugin: p.name }, line);
          this.#failing.set(p.name, line);
          this.#o.onVerdict?.(p.name, false);
        }
      }),
    );
    this.#checked = true;
  }

  /**
   * Checks now and then every interval until the signal aborts, or `stop` (the agent stops acting:
   * it lost its Lease). Never throws.
   */
  async run(stop?: AbortSignal): Promise<void> {
    const { intervalMs, sleep } = this.#o;
    const signal = stop ? AbortSignal.any([this.#o.signal, stop]) : this.#o.signal;
    if (!this.#o.plugins.some((p) => p.checkAuth !== undefined)) return;
    while (!signal.aborted) {
      await this.check();
      await sleep(intervalMs, signal).catch(() => undefined);
    }
  }
}
