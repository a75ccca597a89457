// drainer as the controller of VMIs with evictionStrategy External (kubevirt.external: migrate).
// KubeVirt only marks such a VMI when its launcher pod is evicted (status.evacuationNodeName, by
// its eviction webhook) and moves nothing; its evacuation controller leaves External VMIs to "an
// outside controller". Once the mark names this node, drainer creates the migration itself, and a
// new one after a failure, with KubeVirt's own evacuation backoff (20 s, doubling, at most 5 min).
import type { Logger } from '../../observability/logger.ts';
import type { KubevirtApi } from './port.ts';
import type { Tracker } from './tracker.ts';

const BACKOFF_MS = 20_000;
const MAX_BACKOFF_MS = 5 * 60_000;

export interface ExternalDeps {
  readonly api: KubevirtApi;
  readonly node: string;
  readonly log: Logger;
  readonly now: () => number;
  /** Keys (namespace/name) of the External VMIs drainer moves. */
  readonly vmis: ReadonlySet<string>;
}

export class ExternalController {
  readonly #deps: ExternalDeps;
  /** Migrations created per VMI, by uid (a creation shows in the tracker from the next poll on). */
  readonly #created = new Map<string, number>();

  constructor(deps: ExternalDeps) {
    this.#deps = deps;
  }

  /** Creates a migration for each marked External VMI that has none open. */
  async migrate(tracker: Tracker, signal: AbortSignal): Promise<void> {
    const { api, node, log, now } = this.#deps;
    for (const key of this.#deps.vmis) {
      const seen = tracker.seen(key);
      const vmi = tracker.vmi(key);
      const uid = vmi?.metadata.uid ?? key;
      if (!seen || !vmi || seen.open || seen.total < (this.#created.get(uid) ?? 0)) continue;
      if (vmi.status?.evacuationNodeName !== node) continue; // KubeVirt has not marked it (yet)
      const wait = Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** Math.max(0, seen.failed - 1));
      if (seen.failed > 0 && now() < (seen.lastFailedAt ?? 0) + wait) continue;
      const namespace = vmi.metadata.namespace ?? 'default';
      const answer = await api.createMigration(namespace, vmi.metadata.name, node, signal);
      if (answer.kind === 'created') {
        this.#created.set(uid, seen.total + 1);
        log.info({ vmi: key, migration: answer.name }, 'migration created for an External VMI');
      } else {
        // e.g. an open migration someone else created: followed like any other from the next poll
        log.warn({ vmi: key, reason: answer.message }, 'KubeVirt refused the migration of an External VMI');
      }
    }
  }
}
