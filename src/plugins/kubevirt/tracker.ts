// Follows the migrations of the VMIs that must move: one VMI list and one VMIM list per poll
// (plus one GET per VMI that just left the node, to see where it went). A VMIM that KubeVirt holds
// Pending is queued, not migrating: the per-VMI deadline runs only while a migration of the VMI
// runs, so a retry queued behind others (parallelMigrationsPerCluster) is never timed; KubeVirt's backoff
// after a failed attempt is the VMI failing to move, and is timed (migration-view.ts, backoffMs). A VMI is
// known by its uid: one deleted and created again under its name is a new object (owned.ts).
import { presenceField, vmiPresence } from '../on-host.ts';
import type { WorkloadProgress, WorkloadState } from '../../core/backends/plugin.ts';
import type { Logger } from '../../observability/logger.ts';
import { migratedAway, vmiKey, type Classified } from './classify.ts';
import { backoffMs, handoffState, isFinal, isQueued, queuePlaces } from './migration-view.ts';
import type { KubevirtApi } from './port.ts';
import type { Deadline } from './timeout.ts';
import { migrationsOf, replacement } from './owned.ts';
import type { Vmi, Vmim } from './types.ts';

const FINAL_PHASES = new Set(['Succeeded', 'Failed']);

/** This evacuation's migrations of a VMI as the last poll saw them. */
export interface Seen {
  readonly total: number;
  readonly open: boolean;
  readonly failed: number;
  readonly lastFailedAt?: number;
}

interface Entry {
  readonly c: Classified;
  /** The VMI followed: the uid the entry began with, or that of a VMI created again on the node. */
  uid: string | undefined;
  vmi: Vmi | undefined;
  /** Migrations (by uid) seen as this VMI's, and those of an earlier VMI of its name. */
  readonly mine: Set<string>;
  readonly foreign: ReadonlySet<string>;
  state: Extract<WorkloadState, 'pending' | 'migrating' | 'succeeded' | 'failed' | 'skipped'>;
  /** When a migration of this evacuation first left Pending (the reported start). */
  migratingSince?: number;
  /** The deadline's clock: time spent by finished runs, and the start of the run under way. */
  ranMs: number;
  runningSince?: number;
  /** KubeVirt's backoff before the retry under way (counted as running, up to its end). */
  backoff?: { from: number; ms: number };
  attempts: number;
  /** This evacuation's migrations of the VMI as the last poll saw them. */
  seen: Seen;
  migration?: { namespace: string; name: string; phase: string; uid?: string };
  target?: string;
  finishedAt?: number;
  message?: string;
}

export interface TrackerDeps {
  readonly node: string;
  readonly api: KubevirtApi;
  readonly log: Logger;
  readonly now: () => number;
  /** The deadline of one VMI's running migration. */
  readonly deadline: (vmi: Vmi) => Deadline;
}

/** Where a queued migration stands, from the last poll. */
interface Queue {
  readonly places: ReadonlyMap<string, number>;
  readonly of: number;
}

export class Tracker {
  readonly #deps: TrackerDeps;
  readonly #entries = new Map<string, Entry>();
  /** Migrations already finished when tracking began: history, not attempts of this evacuation. */
  #history: Set<string> | undefined;
  #queue: Queue = { places: new Map(), of: 0 };

  constructor(deps: TrackerDeps) {
    this.#deps = deps;
  }

  begin(movers: readonly Classified[]): void {
    for (const c of movers) this.#entries.set(c.key, fresh(c, c.vmi));
  }

  /** Adds a VMI to follow after the start (an External VMI once KubeVirt marked it). */
  add(c: Classified): void {
    if (!this.#entries.has(c.key)) this.begin([c]);
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

  /** This evacuation's migrations of a VMI still to move, as the last poll saw them. */
  seen(key: string): Seen | undefined {
    const e = this.#entries.get(key);
    return e && (e.state === 'pending' || e.state === 'migrating') ? e.seen : undefined;
  }

  failed(): boolean {
    return [...this.#entries.values()].some((e) => e.state === 'failed');
  }

  async poll(signal: AbortSignal): Promise<void> {
    const { api, node } = this.#deps;
    const [onNode, migrations] = await Promise.all([api.listVmis(node, signal), api.listMigrations(signal)]);
    this.#history ??= new Set(migrations.filter(isFinal).map((m) => m.metadata.uid ?? m.metadata.name));
    const history = this.#history;
    this.#queue = queuePlaces(migrations);
    const byKey = new Map(onNode.map((v) => [vmiKey(v), v]));
    const migsByKey = groupMigrations(
      migrations.filter((m) => !history.has(m.metadata.uid ?? m.metadata.name)),
    );
    for (const key of this.pending()) {
      const e = this.#entries.get(key);
      if (!e) continue;
      const [ns, name] = splitKey(key);
      const vmi = byKey.get(key) ?? (await api.getVmi(ns, name, signal));
      const current = this.#current(e, vmi);
      if (!current) continue;
      current.vmi = vmi;
      this.#update(current, migrationsOf(vmi, migsByKey.get(key) ?? []));
    }
  }

  /**
   * A VMI of the same name but another uid: the one followed is gone. Not on the node, it left it
   * (its owner restarted it, or its controller deleted it); on the node, it is a new workload.
   * The entry to follow on, or undefined when the one followed left.
   */
  #current(e: Entry, vmi: Vmi | undefined): Entry | undefined {
    const seen = replacement(e.uid, vmi, this.#deps.node);
    if (!seen) return e;
    this.#deps.log.info({ vmi: e.c.key, uid: e.uid, now: vmi?.metadata.uid }, seen.message);
    if (seen.kind === 'left') return void this.#finish(e, 'skipped', seen.message);
    const next = fresh(e.c, vmi, new Set([...e.foreign, ...e.mine]));
    this.#entries.set(e.c.key, next);
    return next;
  }

  #update(e: Entry, all: readonly Vmim[]): void {
    const migs = all.filter((m) => !e.foreign.has(m.metadata.uid ?? m.metadata.name));
    for (const m of migs) e.mine.add(m.metadata.uid ?? m.metadata.name);
    // an attempt is a migration KubeVirt started (one held Pending has not been tried yet)
    e.attempts = Math.max(e.attempts, migs.filter((m) => !isQueued(m)).length);
    const failed = migs.filter((m) => m.status?.phase === 'Failed').length;
    e.seen = {
      total: migs.length,
      open: migs.some((m) => !isFinal(m)),
      failed,
      ...(failed > e.seen.failed
        ? { lastFailedAt: this.#deps.now() }
        : e.seen.lastFailedAt !== undefined
          ? { lastFailedAt: e.seen.lastFailedAt }
          : {}),
    };
    const backoff = backoffMs(migs);
    if (backoff > 0 && backoff !== e.backoff?.ms) {
      // a longer window: another failure came before the retry ran; what passed of the last one still counts
      if (e.backoff) e.ranMs += backedOff(e, this.#deps.now());
      e.backoff = { from: e.seen.lastFailedAt ?? this.#deps.now(), ms: backoff };
    }
    // KubeVirt keeps one open migration per VMI; else the newest finished one tells the story
    const latest = migs.find((m) => !isFinal(m)) ?? migs.at(-1);
    if (latest) this.#observe(e, latest);
    this.#judge(e, latest, migs.filter((m) => m.status?.phase === 'Failed').at(-1));
  }

  #observe(e: Entry, m: Vmim): void {
    const phase = m.status?.phase || 'Pending';
    const now = this.#deps.now();
    if (!isQueued(m)) e.migratingSince ??= now;
    if (!isQueued(m) && e.backoff) {
      e.ranMs += backedOff(e, now);
      delete e.backoff;
    }
    // the deadline's clock runs while this migration runs; queued or finished, it stands still
    if (!isQueued(m) && !isFinal(m)) e.runningSince ??= now;
    else if (e.runningSince !== undefined) {
      e.ranMs += now - e.runningSince;
      delete e.runningSince;
    }
    if (e.migration?.name !== m.metadata.name || e.migration.phase !== phase)
      this.#deps.log.debug({ vmi: e.c.key, migration: m.metadata.name, phase }, 'migration phase');
    e.migration = {
      namespace: m.metadata.namespace ?? 'default',
      name: m.metadata.name,
      phase,
      ...(m.metadata.uid ? { uid: m.metadata.uid } : {}),
    };
    e.target = handoffState(e.vmi, m)?.targetNode ?? e.target;
  }

  #judge(e: Entry, latest: Vmim | undefined, lastFailed: Vmim | undefined): void {
    const { now, node, log } = this.#deps;
    const phase = e.vmi?.status?.phase;
    const deadline = e.vmi && e.migratingSince !== undefined ? this.#deps.deadline(e.vmi) : undefined;
    const ran = e.ranMs + (e.runningSince === undefined ? 0 : now() - e.runningSince) + backedOff(e, now());
    if (!e.vmi) {
      this.#finish(
        e,
        'skipped',
        e.c.klass === 'external'
          ? 'taken off the node by its own controller (the VMI was deleted)'
          : 'the VMI was deleted during the evacuation',
      );
    } else if (e.c.klass === 'external' && e.vmi.status?.nodeName && e.vmi.status.nodeName !== node) {
      this.#finish(e, 'succeeded', `moved by its own controller to ${e.vmi.status.nodeName}`);
      e.target = e.vmi.status.nodeName;
    } else if (migratedAway(e.vmi, node)) {
      e.target = e.vmi.status?.nodeName;
      this.#finish(e, 'succeeded', undefined);
      log.info({ vmi: e.c.key, target: e.target, attempts: e.attempts }, 'VMI migrated');
    } else if (phase === 'Succeeded' || phase === 'Failed') {
      this.#finish(e, 'skipped', `the VMI stopped on the node (phase ${phase}) instead of migrating`);
      log.warn({ vmi: e.c.key, phase }, 'VMI stopped instead of migrating');
    } else if (deadline && ran > deadline.ms) {
      const secs = Math.round(deadline.ms / 1000);
      this.#finish(e, 'failed', `not migrated within ${secs}s (${deadline.why})${this.#last(e, lastFailed)}`);
    } else if (latest && e.migration) {
      this.#describe(e, latest, lastFailed);
    } else {
      e.message =
        e.c.klass === 'notify' && !e.vmi.status?.evacuationNodeName
          ? 'drainer.dev/maintenance: notify: its owner may move it within kubevirt.notifyTimeout; then drainer has it live-migrated'
          : e.c.klass === 'external'
            ? 'evictionStrategy External (kubevirt.external: mark): marked for its own controller; waiting for it to take the VMI off the node'
            : e.c.strategy === 'External'
              ? 'evictionStrategy External: waiting for KubeVirt to mark it for evacuation (status.evacuationNodeName)'
              : 'waiting for KubeVirt to start a migration';
    }
  }

  /** The state and message of a VMI with a migration: queued, running (to where), or failed (why). */
  #describe(e: Entry, latest: Vmim, lastFailed: Vmim | undefined): void {
    const name = e.migration?.name ?? latest.metadata.name;
    // a failed attempt KubeVirt retries (the retry may already be queued: say both)
    const retrier =
      e.c.strategy === 'External' ? 'drainer retries (evictionStrategy External)' : 'KubeVirt retries';
    const failed = lastFailed
      ? `migration ${lastFailed.metadata.name} failed (${failureReason(e.vmi, lastFailed)}); ${retrier}`
      : undefined;
    if (isQueued(latest)) {
      e.state = e.migratingSince === undefined ? 'pending' : 'migrating';
      const place = this.#queue.places.get(latest.metadata.uid ?? latest.metadata.name);
      const where = place ? `, ${place} of ${this.#queue.of} waiting in the cluster` : '';
      const held = e.backoff ? ` in KubeVirt's backoff (${e.backoff.ms / 1000}s)` : '';
      const queued = `queued by KubeVirt (migration ${name} Pending${held}${where})`;
      e.message = failed ? `${failed}; ${queued}` : queued;
      return;
    }
    e.state = 'migrating';
    if (latest.status?.phase === 'Failed') {
      e.message = failed ?? `migration ${name} failed`;
      return;
    }
    e.message = `migration ${name} ${e.migration?.phase ?? ''}${e.target ? ` to ${e.target}` : ''}`;
  }

  /** The last migration, and KubeVirt's reason for the last failed one (a deadline's report keeps why). */
  #last(e: Entry, lastFailed?: Vmim): string {
    if (!e.migration) return '; no migration started';
    const last = `; last migration ${e.migration.name} ${e.migration.phase}`;
    if (!lastFailed) return last;
    const why = `(${failureReason(e.vmi, lastFailed)})`;
    return lastFailed.metadata.name === e.migration.name
      ? `${last} ${why}`
      : `${last}; migration ${lastFailed.metadata.name} failed ${why}`;
  }

  #finish(e: Entry, state: Entry['state'], message: string | undefined): void {
    e.state = state;
    e.finishedAt = this.#deps.now();
    if (message) e.message = message;
    else delete e.message;
  }

  progress(c: Classified): WorkloadProgress {
    const e = this.#entries.get(c.key);
    const uid = e?.uid ?? c.vmi.metadata.uid;
    const base = { id: uid ?? c.key, name: c.key, action: c.action, source: this.#deps.node };
    if (!e) return { ...base, state: 'pending', attempts: 0 };
    const since = e.migratingSince;
    return {
      ...base,
      state: e.state,
      attempts: e.attempts,
      ...(since !== undefined
        ? {
            startedAt: new Date(since).toISOString(),
            durationMs: Math.max(0, (e.finishedAt ?? this.#deps.now()) - since),
          }
        : {}),
      ...(e.target ? { target: e.target } : {}),
      ...(e.message ? { message: e.message } : {}),
      // each skip of the tracker is a VMI that left the node (deleted, stopped, elsewhere now)
      ...(e.state === 'skipped'
        ? { presence: 'gone' as const }
        : presenceField(vmiPresence(e.vmi?.status?.phase))),
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

/** The part of KubeVirt's backoff under way that has passed: it counts against the deadline. */
const backedOff = (e: Entry, now: number): number =>
  e.backoff ? Math.min(now, e.backoff.from + e.backoff.ms) - e.backoff.from : 0;

/** Why a migration failed: KubeVirt's failureReason where it wrote one, else where to look. */
const failureReason = (vmi: Vmi | undefined, m: Vmim): string =>
  handoffState(vmi, m)?.failureReason ?? 'reason in Events';

const fresh = (c: Classified, vmi: Vmi | undefined, foreign: ReadonlySet<string> = new Set()): Entry => ({
  c,
  uid: vmi?.metadata.uid,
  vmi,
  mine: new Set(),
  foreign,
  state: 'pending',
  attempts: 0,
  ranMs: 0,
  seen: { total: 0, open: false, failed: 0 },
});

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
