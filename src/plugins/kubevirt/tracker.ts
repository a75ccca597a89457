// Follows the migrations of the VMIs that must move: one VMI list and one VMIM list per poll
// (plus one GET per VMI that just left the node, to see where it went).
import type { WorkloadProgress, WorkloadState } from '../../core/plugin.ts';
import type { Logger } from '../../observability/logger.ts';
import { migratedAway, vmiKey, type Classified } from './classify.ts';
import type { KubevirtApi } from './port.ts';
import type { Vmi, Vmim } from './types.ts';

const FINAL_PHASES = new Set(['Succeeded', 'Failed']);
const isFinal = (m: Vmim): boolean => FINAL_PHASES.has(m.status?.phase ?? '');

interface Entry {
  readonly c: Classified;
  vmi: Vmi | undefined;
  state: Extract<WorkloadState, 'pending' | 'migrating' | 'succeeded' | 'failed' | 'skipped'>;
  readonly trackedSince: number;
  /** When the first migration of this evacuation was seen: the per-VMI timeout runs from here. */
  migratingSince?: number;
  attempts: number;
  migration?: { namespace: string; name: string; phase: string };
  target?: string;
  finishedAt?: number;
  message?: string;
}

export interface TrackerDeps {
  readonly node: string;
  readonly api: KubevirtApi;
  readonly log: Logger;
  readonly now: () => number;
  /** kubevirt.migrationTimeout in ms. */
  readonly timeoutMs: number;
}

export class Tracker {
  readonly #deps: TrackerDeps;
  readonly #entries = new Map<string, Entry>();
  /** Migrations already finished when tracking began: history, not attempts of this evacuation. */
  #history: Set<string> | undefined;

  constructor(deps: TrackerDeps) {
    this.#deps = deps;
  }

  begin(movers: readonly Classified[]): void {
    const now = this.#deps.now();
    for (const c of movers)
      this.#entries.set(c.key, { c, vmi: c.vmi, state: 'pending', trackedSince: now, attempts: 0 });
  }

  /** VMIs still expected to move. */
  pending(): string[] {
    return [...this.#entries]
      .filter(([, e]) => e.state === 'pending' || e.state === 'migrating')
      .map(([k]) => k);
  }

  /** VMIs for which KubeVirt has created no migration yet. */
  notStarted(): string[] {
    return [...this.#entries].filter(([, e]) => e.state === 'pending' && !e.migration).map(([k]) => k);
  }

  vmi(key: string): Vmi | undefined {
    return this.#entries.get(key)?.vmi;
  }

  failed(): boolean {
    return [...this.#entries.values()].some((e) => e.state === 'failed');
  }

  async poll(signal: AbortSignal): Promise<void> {
    const { api, node } = this.#deps;
    const [onNode, migrations] = await Promise.all([api.listVmis(node, signal), api.listMigrations(signal)]);
    this.#history ??= new Set(migrations.filter(isFinal).map((m) => m.metadata.uid ?? m.metadata.name));
    const history = this.#history;
    const byKey = new Map(onNode.map((v) => [vmiKey(v), v]));
    const migsByKey = groupMigrations(
      migrations.filter((m) => !history.has(m.metadata.uid ?? m.metadata.name)),
    );
    for (const key of this.pending()) {
      const e = this.#entries.get(key);
      if (!e) continue;
      const [ns, name] = splitKey(key);
      e.vmi = byKey.get(key) ?? (await api.getVmi(ns, name, signal));
      this.#update(e, migsByKey.get(key) ?? []);
    }
  }

  #update(e: Entry, migs: readonly Vmim[]): void {
    e.attempts = Math.max(e.attempts, migs.length);
    // KubeVirt keeps one open migration per VMI; else the newest finished one tells the story
    const latest = migs.find((m) => !isFinal(m)) ?? migs.at(-1);
    if (latest) this.#observe(e, latest);
    this.#judge(e, latest);
  }

  #observe(e: Entry, m: Vmim): void {
    e.migratingSince ??= this.#deps.now();
    const phase = m.status?.phase ?? 'Pending';
    if (e.migration?.name !== m.metadata.name || e.migration.phase !== phase)
      this.#deps.log.debug({ vmi: e.c.key, migration: m.metadata.name, phase }, 'migration phase');
    e.migration = { namespace: m.metadata.namespace ?? 'default', name: m.metadata.name, phase };
    e.target = m.status?.migrationState?.targetNode ?? e.target;
  }

  #judge(e: Entry, latest: Vmim | undefined): void {
    const { now, node, log, timeoutMs } = this.#deps;
    const phase = e.vmi?.status?.phase;
    if (!e.vmi) {
      this.#finish(e, 'skipped', 'the VMI was deleted during the evacuation');
    } else if (migratedAway(e.vmi, node)) {
      e.target = e.vmi.status?.nodeName;
      this.#finish(e, 'succeeded', undefined);
      log.info({ vmi: e.c.key, target: e.target, attempts: e.attempts }, 'VMI migrated');
    } else if (phase === 'Succeeded' || phase === 'Failed') {
      this.#finish(e, 'skipped', `the VMI stopped on the node (phase ${phase}) instead of migrating`);
      log.warn({ vmi: e.c.key, phase }, 'VMI stopped instead of migrating');
    } else if (now() - (e.migratingSince ?? e.trackedSince) > timeoutMs) {
      const secs = Math.round(timeoutMs / 1000);
      this.#finish(e, 'failed', `not migrated within ${secs}s (kubevirt.migrationTimeout)${this.#last(e)}`);
    } else if (latest && e.migration) {
      e.state = 'migrating';
      const why = latest.status?.migrationState?.failureReason;
      e.message =
        e.migration.phase === 'Failed'
          ? `migration ${e.migration.name} failed${why ? ` (${why})` : ''}; KubeVirt retries`
          : `migration ${e.migration.name} ${e.migration.phase}`;
    } else {
      e.message = 'waiting for KubeVirt to start a migration';
    }
  }

  #last(e: Entry): string {
    return e.migration
      ? `; last migration ${e.migration.name} ${e.migration.phase}`
      : '; no migration started';
  }

  #finish(e: Entry, state: Entry['state'], message: string | undefined): void {
    e.state = state;
    e.finishedAt = this.#deps.now();
    if (message) e.message = message;
    else delete e.message;
  }

  progress(c: Classified): WorkloadProgress {
    const e = this.#entries.get(c.key);
    const base = { id: c.vmi.metadata.uid ?? c.key, name: c.key, action: c.action, source: this.#deps.node };
    if (!e) return { ...base, state: 'pending', attempts: 0 };
    const since = e.migratingSince ?? e.trackedSince;
    return {
      ...base,
      state: e.state,
      attempts: e.attempts,
      startedAt: new Date(since).toISOString(),
      durationMs: Math.max(0, (e.finishedAt ?? this.#deps.now()) - since),
      ...(e.target ? { target: e.target } : {}),
      ...(e.message ? { message: e.message } : {}),
    };
  }

  /** Unfinished migrations of the VMIs still here (KubeVirt aborts a migration whose VMIM is deleted). */
  inFlight(): { vmi: string; namespace: string; name: string }[] {
    return this.pending().flatMap((vmi) => {
      const m = this.#entries.get(vmi)?.migration;
      return m && !FINAL_PHASES.has(m.phase) ? [{ vmi, namespace: m.namespace, name: m.name }] : [];
    });
  }
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}

/** Migrations by namespace/vmiName, oldest first. */
function groupMigrations(migrations: readonly Vmim[]): Map<string, Vmim[]> {
  const out = new Map<string, Vmim[]>();
  const sorted = [...migrations].sort(
    (a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  for (const m of sorted) {
    if (!m.spec?.vmiName) continue;
    const key = `${m.metadata.namespace ?? 'default'}/${m.spec.vmiName}`;
    out.set(key, [...(out.get(key) ?? []), m]);
  }
  return out;
}
