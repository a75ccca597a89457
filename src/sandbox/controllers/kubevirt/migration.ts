// The migration controller: each VirtualMachineInstanceMigration walks Pending → Scheduling →
// Scheduled → PreparingTarget → TargetReady → Running → Succeeded|Failed, at most
// parallelMigrationsPerCluster at once and parallelOutboundMigrationsPerNode per source node.
import type { KubeObject } from '../../kube/types.ts';
import type { Clock } from '../../clock.ts';
import { Timers } from '../loop.ts';
import { pickNode } from '../scheduling.ts';
import { RES, mutate, mutateStatus, tryDelete, tryGet, type StoreLike } from '../store.ts';
import type { ControllerTimings } from '../types.ts';
import { isoTime } from '../util.ts';
import { createLauncher } from './lifecycle.ts';
import { readSettings } from './config.ts';
import {
  ANN,
  MIGRATION_FINALIZER,
  isRunning,
  notMigratableReason,
  vmiStatus,
  type MigrationState,
  type VmiStatus,
} from './vmi.ts';

const STEPS = ['Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running'] as const;
export const IN_FLIGHT: ReadonlySet<string> = new Set(STEPS);
export const isFinal = (m: KubeObject): boolean => ['Succeeded', 'Failed'].includes(phaseOf(m) ?? '');

export const phaseOf = (m: KubeObject): string | undefined =>
  (m.status as { phase?: string } | undefined)?.phase;
const stateOf = (m: KubeObject): MigrationState =>
  (m.status as { migrationState?: MigrationState } | undefined)?.migrationState ?? {};
export const sourceOf = (m: KubeObject): string | undefined => stateOf(m).sourceNode;
const vmiNameOf = (m: KubeObject): string => (m.spec as { vmiName?: string } | undefined)?.vmiName ?? '';

/** Failures per VMI uid, read by the evacuation controller to back off its retries. */
export class MigrationHistory {
  readonly failures = new Map<string, { count: number; lastAt: number }>();
  readonly attempts = new Map<string, number>();
  /** Highest number of migrations seen in flight at once, cluster-wide and per source node. */
  maxInFlight = 0;
  readonly maxInFlightPerNode = new Map<string, number>();
}

/** What the migration and the evacuation controller share (one object serves both). */
export interface VirtControllerDeps {
  store: StoreLike;
  clock: Clock;
  timings: ControllerTimings;
  history: MigrationHistory;
  wake: () => void;
  onError: (e: unknown) => void;
}

export function createMigrationController(deps: VirtControllerDeps, signal: AbortSignal) {
  const { store, clock, timings, history } = deps;
  const timers = new Timers((ms, fn) => clock.after(ms, fn), signal, deps.onError);
  const now = () => isoTime(clock.now());

  const setStatus = (m: KubeObject, phase: string, state: MigrationState) => {
    mutateStatus(store, RES.vmims, m, (o) => {
      const s = (o.status ?? {}) as { phaseTransitionTimestamps?: unknown[] };
      const stamps = s.phaseTransitionTimestamps ?? [];
      o.status = {
        ...s,
        phase,
        phaseTransitionTimestamps:
          phaseOf(o) === phase ? stamps : [...stamps, { phase, phaseTransitionTimestamp: now() }],
        migrationState: state,
      };
    });
  };

  const setVmiState = (vmi: KubeObject, state: MigrationState, extra: Record<string, unknown> = {}) =>
    mutateStatus(store, RES.vmis, vmi, (v) => {
      v.status = { ...vmiStatus(v), migrationState: state, ...extra };
    });

  const removeFinalizer = (m: KubeObject) =>
    mutate(store, RES.vmims, m, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== MIGRATION_FINALIZER);
    });

  const deleteTargetPod = (m: KubeObject) => {
    const pod = stateOf(m).targetPod;
    if (pod) tryDelete(store, RES.pods, m.metadata.namespace, pod, { gracePeriodSeconds: 0 });
  };

  const fail = (m: KubeObject, vmi: KubeObject | undefined, reason: string, extra: MigrationState = {}) => {
    timers.cancel(m.metadata.uid ?? '');
    deleteTargetPod(m);
    const state: MigrationState = {
      ...stateOf(m),
      ...extra,
      endTimestamp: now(),
      completed: true,
      failed: true,
      failureReason: reason,
    };
    setStatus(m, 'Failed', state);
    if (vmi && vmiStatus(vmi).migrationState?.migrationUid === m.metadata.uid) setVmiState(vmi, state);
    if (vmi?.metadata.uid) {
      const f = history.failures.get(vmi.metadata.uid) ?? { count: 0, lastAt: 0 };
      history.failures.set(vmi.metadata.uid, { count: f.count + 1, lastAt: clock.now() });
    }
  };

  const succeed = (m: KubeObject, vmi: KubeObject) => {
    const st = stateOf(m);
    const target = st.targetNode ?? '';
    const state: MigrationState = { ...st, endTimestamp: now(), completed: true, failed: false };
    // The VMI moves first, so the lifecycle controller never sees it without a live launcher.
    mutate(store, RES.vmis, vmi, (v) => {
      v.metadata.labels = { ...v.metadata.labels, 'kubevirt.io/nodeName': target };
    });
    const targetPod = st.targetPod ? tryGet(store, RES.pods, m.metadata.namespace, st.targetPod) : undefined;
    mutateStatus(store, RES.vmis, vmi, (v) => {
      const s: VmiStatus = { ...vmiStatus(v), nodeName: target, migrationState: state };
      delete s.evacuationNodeName;
      if (targetPod) s.activePods = { [targetPod.metadata.uid ?? '']: target };
      v.status = s;
    });
    setStatus(m, 'Succeeded', state);
    history.failures.delete(vmi.metadata.uid ?? '');
    // The source launcher's domain is gone: the pod completes, then is removed.
    const source = st.sourceNode;
    for (const pod of store.list(RES.pods, {
      namespace: vmi.metadata.namespace,
      labelSelector: 'kubevirt.io=virt-launcher',
    })) {
      if (pod.metadata.labels?.['kubevirt.io/created-by'] !== vmi.metadata.uid) continue;
      if ((pod.spec as { nodeName?: string }).nodeName !== source || pod.metadata.name === st.targetPod)
        continue;
      mutateStatus(store, RES.pods, pod, (p) => {
        p.status = { ...(p.status as object), phase: 'Succeeded', conditions: [] };
      });
      timers.set(`gc/${pod.metadata.uid}`, timings.migrationStepSeconds * 1000, () =>
        tryDelete(store, RES.pods, pod.metadata.namespace, pod.metadata.name ?? '', {
          gracePeriodSeconds: 0,
        }),
      );
    }
  };

  const durationOf = (vmi: KubeObject): number => {
    const s = Number(vmi.metadata.annotations?.[ANN.migrationSeconds]);
    return (
      (Number.isFinite(s) && s >= 0 && vmi.metadata.annotations?.[ANN.migrationSeconds]
        ? s
        : timings.migrationSeconds) * 1000
    );
  };

  /** One step forward, run by the phase timer. */
  const advance = (ref: KubeObject) => {
    const m = tryGet(store, RES.vmims, ref.metadata.namespace, ref.metadata.name ?? '');
    if (!m || m.metadata.uid !== ref.metadata.uid || m.metadata.deletionTimestamp || isFinal(m)) return;
    const vmi = tryGet(store, RES.vmis, m.metadata.namespace, vmiNameOf(m));
    if (!vmi || !isRunning(vmi)) return fail(m, vmi, 'VMI is no longer running');
    const target = stateOf(m).targetPod;
    const targetPod = target ? tryGet(store, RES.pods, m.metadata.namespace, target) : undefined;
    if (!targetPod || targetPod.metadata.deletionTimestamp) return fail(m, vmi, 'target pod disappeared');
    const phase = phaseOf(m) ?? '';
    const idx = STEPS.indexOf(phase as (typeof STEPS)[number]);
    if (phase === 'Running') {
      const attempt = history.attempts.get(vmi.metadata.uid ?? '') ?? 1;
      const failFirst = Number(vmi.metadata.annotations?.[ANN.failFirstAttempts] ?? 0);
      if (attempt <= failFirst)
        fail(m, vmi, `injected failure (attempt ${attempt} of the first ${failFirst})`);
      else succeed(m, vmi);
      deps.wake();
      return;
    }
    const next = STEPS[idx + 1] ?? 'Running';
    let state = stateOf(m);
    if (next === 'Running') {
      const uid = vmi.metadata.uid ?? '';
      history.attempts.set(uid, (history.attempts.get(uid) ?? 0) + 1);
      state = { ...state, startTimestamp: now() };
      setVmiState(vmi, state);
    }
    setStatus(m, next, state);
    schedule(m, next === 'Running' ? durationOf(vmi) : timings.migrationStepSeconds * 1000);
  };

  const schedule = (m: KubeObject, ms: number) => timers.set(m.metadata.uid ?? '', ms, () => advance(m));

  const start = (m: KubeObject, vmi: KubeObject): boolean => {
    const source = vmiStatus(vmi).nodeName ?? '';
    const launchers = store.list(RES.pods, { labelSelector: 'kubevirt.io=virt-launcher' });
    const target = pickNode(store, { siblings: launchers, exclude: [source] });
    if (!target) return false;
    const pod = createLauncher(store, clock, vmi, target, m.metadata.uid);
    const state: MigrationState = {
      migrationUid: m.metadata.uid ?? '',
      sourceNode: source,
      targetNode: target,
      targetPod: pod.metadata.name ?? '',
      mode: 'PreCopy',
      completed: false,
      failed: false,
    };
    setVmiState(vmi, state);
    setStatus(m, 'Scheduling', state);
    schedule(m, timings.migrationStepSeconds * 1000);
    return true;
  };

  const abort = (m: KubeObject) => {
    const vmi = tryGet(store, RES.vmis, m.metadata.namespace, vmiNameOf(m));
    if (!isFinal(m) && phaseOf(m) && phaseOf(m) !== 'Pending') {
      fail(m, vmi, 'migration aborted: VirtualMachineInstanceMigration deleted', {
        abortRequested: true,
        abortStatus: 'Succeeded',
      });
    }
    timers.cancel(m.metadata.uid ?? '');
  };

  /** Admits new migrations (finalizer, Pending) and starts Pending ones while slots are free. */
  const reconcile = () => {
    const all = store.list(RES.vmims);
    for (const m of all) {
      if (m.metadata.deletionTimestamp) {
        abort(m);
        removeFinalizer(m);
        continue;
      }
      if (phaseOf(m)) continue;
      mutate(store, RES.vmims, m, (o) => {
        o.metadata.finalizers = [...new Set([...(o.metadata.finalizers ?? []), MIGRATION_FINALIZER])];
        o.metadata.labels = { ...o.metadata.labels, 'kubevirt.io/vmi-name': vmiNameOf(o) };
      });
      const vmi = tryGet(store, RES.vmis, m.metadata.namespace, vmiNameOf(m));
      const reason = vmi && notMigratableReason(vmi);
      if (!vmi || !isRunning(vmi)) fail(m, vmi, `VMI ${vmiNameOf(m)} is not running`);
      else if (reason) fail(m, vmi, `VMI is not migratable: ${reason}`);
      else setStatus(m, 'Pending', {});
    }
    startPending();
    observe();
  };

  const startPending = () => {
    const settings = readSettings(store);
    const current = store.list(RES.vmims).filter((m) => !m.metadata.deletionTimestamp);
    const active = current.filter((m) => IN_FLIGHT.has(phaseOf(m) ?? ''));
    const perNode = new Map<string, number>();
    for (const m of active) perNode.set(sourceOf(m) ?? '', (perNode.get(sourceOf(m) ?? '') ?? 0) + 1);
    let total = active.length;
    const pending = current
      .filter((m) => phaseOf(m) === 'Pending')
      .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    for (const m of pending) {
      if (total >= settings.parallelMigrationsPerCluster) break;
      const vmi = tryGet(store, RES.vmis, m.metadata.namespace, vmiNameOf(m));
      if (!vmi || !isRunning(vmi)) {
        fail(m, vmi, `VMI ${vmiNameOf(m)} is not running`);
        continue;
      }
      const source = vmiStatus(vmi).nodeName ?? '';
      if ((perNode.get(source) ?? 0) >= settings.parallelOutboundMigrationsPerNode) continue;
      if (!start(m, vmi)) continue;
      total++;
      perNode.set(source, (perNode.get(source) ?? 0) + 1);
    }
  };

  /** Records the concurrency reached (tests and benchmarks assert the limits with it). */
  const observe = () => {
    const active = store.list(RES.vmims).filter((m) => IN_FLIGHT.has(phaseOf(m) ?? ''));
    history.maxInFlight = Math.max(history.maxInFlight, active.length);
    const perNode = new Map<string, number>();
    for (const m of active) perNode.set(sourceOf(m) ?? '', (perNode.get(sourceOf(m) ?? '') ?? 0) + 1);
    for (const [n, c] of perNode)
      history.maxInFlightPerNode.set(n, Math.max(history.maxInFlightPerNode.get(n) ?? 0, c));
  };

  /** A migration deleted without our finalizer (or after it was removed) is aborted too. */
  const onDeleted = (m: KubeObject) => abort(m);

  return { reconcile, onDeleted };
}
