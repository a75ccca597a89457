// The evacuation controller (KubeVirt's pkg/virt-controller/watch/drain/evacuation/evacuation.go,
// sync): on a node with the drain taint every VMI, elsewhere the VMIs marked by the eviction
// webhook (status.evacuationNodeName), that want to live-migrate on eviction (LiveMigrate, or
// LiveMigrateIfPossible when migratable) get a VirtualMachineInstanceMigration. It never marks a VMI
// itself: External VMIs are left to their own controller. From v1.9 (MigrationPriorityQueue GA) it
// creates every migration at once and the migration controller throttles them; up to v1.8 it
// throttles itself, creating no more than the free slots (parallelMigrationsPerCluster, and
// parallelOutboundMigrationsPerNode per node; counted here as every unfinished migration).
import type { KubeObject } from '../../kube/types.ts';
import { RES } from '../store.ts';
import { taintsOf } from '../util.ts';
import { readSettings } from './config.ts';
import { recordEvent } from './events.ts';
import { isFinal } from './migration-phase.ts';
import type { VirtControllerDeps } from './virt-deps.ts';
import {
  EVACUATION_ANNOTATION,
  isRunning,
  migratesOnEvacuation,
  notMigratableReason,
  vmiStatus,
} from './vmi.ts';
import { effectiveStrategy } from './vmi.ts';

/** KubeVirt creates every evacuation migration at once from this minor version on. */
export const QUEUE_ALL_FROM_MINOR = 9;

const vmiKeyOfMigration = (m: KubeObject): string =>
  `${m.metadata.namespace}/${(m.spec as { vmiName?: string }).vmiName}`;

export function createEvacuationController(deps: VirtControllerDeps, _signal: AbortSignal) {
  const { store } = deps;
  /** VMIs told "not migrateable" once (KubeVirt repeats it; once is enough here). */
  const told = new Set<string>();

  const reconcile = () => {
    const settings = readSettings(store);
    const tainted = new Set(
      store
        .list(RES.nodes)
        .filter((n) => taintsOf(n).some((t) => t.key === settings.drainTaintKey && t.effect === 'NoSchedule'))
        .map((n) => n.metadata.name),
    );
    const open = store.list(RES.vmims).filter((m) => !isFinal(m) && !m.metadata.deletionTimestamp);
    const migrating = new Set(open.map(vmiKeyOfMigration));
    const sourceOf = new Map<string, string>();
    const candidates: KubeObject[] = [];
    for (const vmi of store.list(RES.vmis)) {
      if (!isRunning(vmi)) continue;
      const node = vmiStatus(vmi).nodeName ?? '';
      const key = `${vmi.metadata.namespace}/${vmi.metadata.name}`;
      sourceOf.set(key, node);
      const marked = vmiStatus(vmi).evacuationNodeName === node;
      if (!marked && !tainted.has(node)) continue;
      const strategy = effectiveStrategy(vmi, settings);
      if (strategy === 'LiveMigrate' && notMigratableReason(vmi) && !told.has(key)) {
        told.add(key);
        recordEvent(store, vmi, 'Normal', 'FailedCreate', 'VirtualMachineInstance is not migrateable');
      }
      if (!migratesOnEvacuation(vmi, settings) || migrating.has(key)) continue;
      candidates.push(vmi);
    }
    const queueAll = settings.minor >= QUEUE_ALL_FROM_MINOR;
    let total = open.length;
    const perNode = new Map<string, number>();
    for (const m of open) {
      const src = sourceOf.get(vmiKeyOfMigration(m)) ?? '';
      perNode.set(src, (perNode.get(src) ?? 0) + 1);
    }
    for (const vmi of candidates) {
      const node = vmiStatus(vmi).nodeName ?? '';
      if (!queueAll) {
        if (total >= settings.parallelMigrationsPerCluster) break;
        if ((perNode.get(node) ?? 0) >= settings.parallelOutboundMigrationsPerNode) continue;
      }
      const created = store.create(RES.vmims, {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstanceMigration',
        metadata: {
          generateName: 'kubevirt-evacuation-',
          namespace: vmi.metadata.namespace,
          annotations: { [EVACUATION_ANNOTATION]: node },
        },
        spec: { vmiName: vmi.metadata.name },
      });
      recordEvent(
        store,
        vmi,
        'Normal',
        'SuccessfulCreate',
        `Created Migration ${created.metadata.name ?? ''}`,
      );
      total++;
      perNode.set(node, (perNode.get(node) ?? 0) + 1);
    }
  };

  return { reconcile };
}
