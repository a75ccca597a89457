// Starts the chosen simulated controllers; all stop when the signal aborts.
import { startDisruption } from './disruption.ts';
import { startKubelet } from './kubelet.ts';
import { startKubevirtWith, MigrationHistory } from './kubevirt/index.ts';
import { startNodeLifecycle } from './node-lifecycle.ts';
import { startReplicaSet } from './replicaset.ts';
import type { ControllerDeps, ControllerName, StartController } from './types.ts';

export type { ControllerDeps, ControllerName, ControllerTimings } from './types.ts';
export { defaultTimings } from './types.ts';
export { MigrationHistory } from './kubevirt/index.ts';

export const CONTROLLER_NAMES: readonly ControllerName[] = [
  'kubelet',
  'replicaset',
  'disruption',
  'nodeLifecycle',
  'kubevirt',
];

export interface StartedControllers {
  readonly running: readonly ControllerName[];
  /** KubeVirt migration bookkeeping (max concurrency seen, failures). */
  readonly migrations: MigrationHistory;
}

export function startControllers(
  deps: ControllerDeps,
  signal: AbortSignal,
  enabled: Partial<Record<ControllerName, boolean>> = {},
): StartedControllers {
  const migrations = new MigrationHistory();
  const starters: Record<ControllerName, StartController> = {
    kubelet: startKubelet,
    replicaset: startReplicaSet,
    disruption: startDisruption,
    nodeLifecycle: startNodeLifecycle,
    kubevirt: startKubevirtWith(migrations),
  };
  const running = CONTROLLER_NAMES.filter((n) => enabled[n] !== false);
  for (const name of running) starters[name](deps, signal);
  return { running, migrations };
}
