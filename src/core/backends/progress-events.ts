// Turns the plugins' progress reports into Events, one per state change of a workload
// (MigrationStarted / MigrationSucceeded / MigrationFailed), and into NodeMaintenance progress.
import type { EventReason } from '../cluster/cluster.ts';
import type { Plan, WorkloadProgress } from './plugin.ts';

export type EmitEvent = (type: 'Normal' | 'Warning', reason: EventReason, message: string) => void;

const describe = (plugin: string, w: WorkloadProgress): string => `${plugin}: ${w.name} (${w.id})`;

/** Remembers the last state of each workload so repeats of the same report emit nothing. */
export class ProgressEvents {
  readonly #seen = new Map<string, string>();
  /** Workload attempts whose stall has been told (once each). */
  readonly #stalls = new Set<string>();
  readonly #emit: EmitEvent;

  constructor(emit: EmitEvent) {
    this.#emit = emit;
  }

  report(plugin: string, items: readonly WorkloadProgress[]): void {
    for (const w of items) {
      const key = `${plugin}/${w.id}`;
      this.#stalled(plugin, w);
      const state = `${w.state}/${w.attempts}${w.action === 'notify' ? '/notify' : ''}`;
      if (this.#seen.get(key) === state) continue;
      this.#seen.set(key, state);
      this.#emitFor(plugin, w);
    }
  }

  /** A live migration that stopped converging, with its owner: the tenant's VM pauses (force) or stays. */
  #stalled(plugin: string, w: WorkloadProgress): void {
    const key = `${plugin}/${w.id}#${w.attempts}`;
    if (!w.copy?.stallAction || this.#stalls.has(key)) return;
    this.#stalls.add(key);
    const owner = w.owner ? ` of project ${w.owner}` : '';
    this.#emit(
      'Warning',
      'MigrationStalled',
      `${describe(plugin, w)}${owner}: ${w.message ?? 'not converging'}`,
    );
  }

  #emitFor(plugin: string, w: WorkloadProgress): void {
    const what = describe(plugin, w);
    if (w.state === 'migrating') {
      const from = w.source ? ` from ${w.source}` : '';
      this.#emit('Normal', 'MigrationStarted', `${what}: ${w.action}${from} (attempt ${w.attempts})`);
    } else if (w.state === 'succeeded') {
      const to = w.target ? ` to ${w.target}` : '';
      const took = w.durationMs !== undefined ? ` in ${Math.round(w.durationMs / 1000)}s` : '';
      this.#emit('Normal', 'MigrationSucceeded', `${what}: moved${to}${took}`);
    } else if (w.state === 'failed') {
      this.#emit('Warning', 'MigrationFailed', `${what}: ${w.message ?? 'migration failed'}`);
    } else if (w.state === 'pending' && w.action === 'notify') {
      const owner = w.owner ? ` of project ${w.owner}` : '';
      this.#emit(
        'Warning',
        'MoveRequested',
        `${what}${owner}: ${w.message ?? 'its owner is asked to move it'}`,
      );
    } else if (w.state === 'blocked') {
      this.#emit('Warning', 'EvacuationBlocked', `${what}: ${w.message ?? 'cannot move'}`);
    }
  }
}

/** One line per plugin: "nova on compute-a: 3 live-migrate, 1 cold-migrate; blocked: vm-x (reason)". */
export function summarizePlans(plans: readonly Plan[]): { message: string; blockers: string[] } {
  const blockers: string[] = [];
  const parts = plans.map((p) => {
    const counts = new Map<string, number>();
    for (const w of p.workloads) {
      counts.set(w.action, (counts.get(w.action) ?? 0) + 1);
      if (w.action === 'none') blockers.push(`${p.plugin}: ${w.name} (${w.blocker ?? 'blocked'})`);
    }
    const where = p.location ? ` on ${p.location}` : '';
    const list = [...counts]
      .map(([action, n]) => `${n} ${action === 'none' ? 'blocked' : action}`)
      .join(', ');
    return `${p.plugin}${where}: ${list || 'nothing to move'}`;
  });
  const capacity = plans.flatMap((p) => (p.capacity ? [p.capacity.message] : []));
  const checked = capacity.length ? `; capacity: ${capacity.join('; ')}` : '';
  return { message: (parts.join('; ') || 'no plugins') + checked, blockers };
}
