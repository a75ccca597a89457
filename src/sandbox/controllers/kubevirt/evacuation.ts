// The evacuation controller: VMIs on a node carrying the drain taint, or whose launcher eviction was
// requested (status.evacuationNodeName), get a VirtualMachineInstanceMigration, within the cluster
// and per-node limits; a failed one is retried after a doubling backoff, as KubeVirt does.
import type { KubeObject } from '../../kube/types.ts';
import { Timers } from '../loop.ts';
import { RES, mutateStatus } from '../store.ts';
import { taintsOf } from '../util.ts';
import { readSettings } from './config.ts';
import { isFinal, type VirtControllerDeps } from './migration.ts';
import {
  EVACUATION_ANNOTATION,
  effectiveStrategy,
  isRunning,
  migratesOnEvacuation,
  vmiStatus,
} from './vmi.ts';

const MAX_BACKOFF_MS = 5 * 60_000;

export function createEvacuationController(deps: VirtControllerDeps, signal: AbortSignal) {
  const { store, clock, timings, history } = deps;
  const timers = new Timers((ms, fn) => clock.after(ms, fn), signal, deps.onError);

  /** Milliseconds until a retry is allowed (0 = now). */
  const backoffLeft = (vmi: KubeObject): number => {
    const f = history.failures.get(vmi.metadata.uid ?? '');
    if (!f) return 0;
    const wait = Math.min(MAX_BACKOFF_MS, timings.migrationBackoffSeconds * 1000 * 2 ** (f.count - 1));
    return Math.max(0, f.lastAt + wait - clock.now());
  };

  const reconcile = () => {
    const settings = readSettings(store);
    const tainted = new Set(
      store
        .list(RES.nodes)
        .filter((n) => taintsOf(n).some((t) => t.key === settings.drainTaintKey && t.effect === 'NoSchedule'))
        .map((n) => n.metadata.name),
    );
    const open = store.list(RES.vmims).filter((m) => !isFinal(m) && !m.metadata.deletionTimestamp);
    const migrating = new Set(
      open.map((m) => `${m.metadata.namespace}/${(m.spec as { vmiName?: string }).vmiName}`),
    );
    const sourceOf = new Map<string, string>();
    const candidates: KubeObject[] = [];
    for (const vmi of store.list(RES.vmis)) {
      if (!isRunning(vmi)) continue;
      const node = vmiStatus(vmi).nodeName ?? '';
      sourceOf.set(`${vmi.metadata.namespace}/${vmi.metadata.name}`, node);
      const evicted = vmiStatus(vmi).evacuationNodeName === node;
      if (!evicted && !tainted.has(node)) continue;
      if (effectiveStrategy(vmi, settings) === 'External') {
        // Someone else moves it; KubeVirt only marks it.
        if (!evicted)
          mutateStatus(
            store,
            RES.vmis,
            vmi,
            (v) => void (v.status = { ...vmiStatus(v), evacuationNodeName: node }),
          );
        continue;
      }
      if (!migratesOnEvacuation(vmi, settings)) continue;
      if (migrating.has(`${vmi.metadata.namespace}/${vmi.metadata.name}`)) continue;
      const wait = backoffLeft(vmi);
      if (wait > 0) {
        timers.set(vmi.metadata.uid ?? '', wait, deps.wake);
        continue;
      }
      candidates.push(vmi);
    }
    let total = open.length;
    const perNode = new Map<string, number>();
    for (const m of open) {
      const src = sourceOf.get(`${m.metadata.namespace}/${(m.spec as { vmiName?: string }).vmiName}`) ?? '';
      perNode.set(src, (perNode.get(src) ?? 0) + 1);
    }
    for (const vmi of candidates) {
      if (total >= settings.parallelMigrationsPerCluster) break;
      const node = vmiStatus(vmi).nodeName ?? '';
      if ((perNode.get(node) ?? 0) >= settings.parallelOutboundMigrationsPerNode) continue;
      store.create(RES.vmims, {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstanceMigration',
        metadata: {
          generateName: 'kubevirt-evacuation-',
          namespace: vmi.metadata.namespace,
          annotations: { [EVACUATION_ANNOTATION]: node },
          labels: { 'kubevirt.io/vmi-name': vmi.metadata.name ?? '' },
        },
        spec: { vmiName: vmi.metadata.name },
      });
      total++;
      perNode.set(node, (perNode.get(node) ?? 0) + 1);
    }
  };

  return { reconcile };
}
