// What a VirtualMachineInstanceMigration says, read the way KubeVirt writes it
// (pkg/virt-controller/watch/migration/migration.go): the VMIM's status.migrationState is copied
// from the VMI only once the VMIM is final, and only when the target handoff happened; while it
// runs, the target node is on the VMI's status.migrationState, matched by migrationUid.
import type { MigrationState, Vmi, Vmim } from './types.ts';

const FINAL_PHASES = new Set(['Succeeded', 'Failed']);

export const isFinal = (m: Vmim): boolean => FINAL_PHASES.has(m.status?.phase ?? '');

/** Not started by KubeVirt yet: phase unset or Pending (its migration controller throttles here). */
export const isQueued = (m: Vmim): boolean => !m.status?.phase || m.status.phase === 'Pending';

/** The migration's state as KubeVirt reports it: the VMI's while it is this migration's, else the final copy. */
export function handoffState(vmi: Vmi | undefined, m: Vmim): MigrationState | undefined {
  const own = vmi?.status?.migrationState;
  if (own && m.metadata.uid && own.migrationUid === m.metadata.uid) return own;
  return isFinal(m) ? m.status?.migrationState : undefined;
}

/** Where each queued migration stands among those KubeVirt holds Pending, oldest first (uid → place). */
export function queuePlaces(migrations: readonly Vmim[]): { places: Map<string, number>; of: number } {
  const queued = migrations
    .filter((m) => isQueued(m) && !m.metadata.deletionTimestamp)
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        a.metadata.name.localeCompare(b.metadata.name),
    );
  const places = new Map(queued.map((m, i) => [m.metadata.uid ?? m.metadata.name, i + 1]));
  return { places, of: queued.length };
}

/** Migrations KubeVirt backs off between (its evacuation and workload-update ones). */
const BACKOFF_ELIGIBLE = ['kubevirt.io/evacuationMigration', 'kubevirt.io/workloadUpdateMigration'];

/**
 * How long KubeVirt holds a VMI's newest migration Pending after the last failed one, as its migration
 * controller does (handleMigrationBackoff): 20 s after one failure since the last success, doubled for each
 * further one; 0 where no backoff applies (not the newest, not queued, not an evacuation, no failure).
 * `migs` are one VMI's migrations, oldest first.
 */
export function backoffMs(migs: readonly Vmim[]): number {
  const eligible = migs.filter((m) =>
    BACKOFF_ELIGIBLE.some((a) => m.metadata.annotations?.[a] !== undefined),
  );
  const newest = eligible.at(-1);
  if (!newest || newest !== migs.at(-1) || !isQueued(newest)) return 0;
  let ms = 0;
  for (const m of eligible.slice(0, -1).reverse()) {
    if (m.status?.phase === 'Succeeded') break;
    if (m.metadata.deletionTimestamp) continue;
    if (m.status?.phase === 'Failed') ms = ms === 0 ? 20_000 : ms * 2;
  }
  return ms;
}
