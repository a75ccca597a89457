// The migration controller (KubeVirt's pkg/virt-controller/watch/migration/migration.go): each
// VirtualMachineInstanceMigration walks Pending → Scheduling → Scheduled → PreparingTarget →
// TargetReady → Running → Succeeded|Failed. Pending ones start while fewer than
// parallelMigrationsPerCluster (and parallelOutboundMigrationsPerNode from the VMI's node) are past
// Pending. The target pod is created at Scheduling even when no node has room (it takes the slot and
// fails after 5 min unschedulable). The VMI's status.migrationState is written at the handoff to the
// target (Scheduled → PreparingTarget); the VMIM's status.migrationState gets a copy of it only once
// final, and only when the handoff happened. A failure before the handoff says why in an Event only.
import type { KubeObject } from '../../kube/types.ts';
import { Timers } from '../loop.ts';
import { pickNode } from '../scheduling.ts';
import { RES, mutate, mutateStatus, tryDelete, tryGet, type StoreLike } from '../store.ts';
import { podNode } from '../util.ts';
import { readSettings } from './config.ts';
import { recordEvent } from './events.ts';
import { IN_FLIGHT, isFinal, phaseOf } from './migration-phase.ts';
import { createTargetPod, migrationMs } from './migration-target.ts';
import type { VirtControllerDeps } from './virt-deps.ts';
import {
  ANN,
  EVACUATION_ANNOTATION,
  MIGRATION_FINALIZER,
  MIGRATION_JOB_LABEL,
  activeLauncher,
  isRunning,
  vmiStatus,
  type MigrationState,
  type VmiStatus,
} from './vmi.ts';

/** The stamp of a migration's end (its VMIM's and VMI's status.migrationState.endTimestamp). */
export const MIGRATION_ENDED = 'status.migrationState.endTimestamp';
/** migration.go defaultUnschedulablePendingTimeoutSeconds. */
export const UNSCHEDULABLE_TIMEOUT_MS = 5 * 60_000;
const MAX_BACKOFF_MS = 5 * 60_000;

const vmiNameOf = (m: KubeObject): string => (m.spec as { vmiName?: string } | undefined)?.vmiName ?? '';
const vmiByName = (store: StoreLike, m: KubeObject): KubeObject | undefined =>
  tryGet(store, RES.vmis, m.metadata.namespace, vmiNameOf(m));
/** The VMI's migrationState belongs to this migration: the handoff happened. */
const handedOff = (vmi: KubeObject | undefined, m: KubeObject): boolean =>
  !!vmi && !!m.metadata.uid && vmiStatus(vmi).migrationState?.migrationUid === m.metadata.uid;

export function createMigrationController(deps: VirtControllerDeps, signal: AbortSignal) {
  const { store, clock, timings, history } = deps;
  /** The VMI each admitted migration moves, by uid: one created again under its name is not it. */
  const vmiUids = new Map<string, string>();
  const vmiOf = (_store: StoreLike, m: KubeObject): KubeObject | undefined => {
    const vmi = vmiByName(store, m);
    const want = vmiUids.get(m.metadata.uid ?? '');
    return vmi && want && vmi.metadata.uid !== want ? undefined : vmi;
  };
  const timers = new Timers((ms, fn) => clock.after(ms, fn), signal, deps.onError);
  const now = () => store.stamps.at();
  /** A migration's end, whose moment the promises weigh (kept exactly; the stamp is real time). */
  const ended = (m: KubeObject) => store.stamps.stamp(m.metadata.uid, MIGRATION_ENDED);
  /** VMIMs whose backoff Event was recorded (once per VMIM). */
  const toldBackoff = new Set<string>();
  const event = (about: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string) =>
    recordEvent(store, about, type, reason, message);

  const setPhase = (m: KubeObject, phase: string, extra: Record<string, unknown> = {}) =>
    mutateStatus(store, RES.vmims, m, (o) => {
      const s = (o.status ?? {}) as { phaseTransitionTimestamps?: unknown[] };
      const stamps = s.phaseTransitionTimestamps ?? [];
      o.status = {
        ...s,
        ...extra,
        phase,
        phaseTransitionTimestamps:
          phaseOf(o) === phase ? stamps : [...stamps, { phase, phaseTransitionTimestamp: now() }],
      };
    });

  const setVmiState = (vmi: KubeObject, state: MigrationState) =>
    mutateStatus(store, RES.vmis, vmi, (v) => {
      v.status = { ...vmiStatus(v), migrationState: state };
    });

  const targetPodOf = (m: KubeObject): KubeObject | undefined =>
    store
      .list(RES.pods, {
        namespace: m.metadata.namespace,
        labelSelector: `${MIGRATION_JOB_LABEL}=${m.metadata.uid ?? ''}`,
      })
      .find((p) => !p.metadata.deletionTimestamp);

  const deleteTargetPod = (m: KubeObject) => {
    const pod = targetPodOf(m);
    if (pod)
      tryDelete(store, RES.pods, m.metadata.namespace, pod.metadata.name ?? '', { gracePeriodSeconds: 0 });
  };

  const countFailure = (vmi: KubeObject | undefined) => {
    if (!vmi?.metadata.uid) return;
    const f = history.failures.get(vmi.metadata.uid) ?? { count: 0, lastAt: 0 };
    history.failures.set(vmi.metadata.uid, { count: f.count + 1, lastAt: clock.now() });
  };

  /**
   * Fails the migration. After the handoff the VMI's migrationState says why (failureReason) and
   * the VMIM gets its copy; before it, only an Event on the VMIM does (`event`).
   */
  const fail = (m: KubeObject, vmi: KubeObject | undefined, why: string, extra: MigrationState = {}) => {
    timers.cancel(m.metadata.uid ?? '');
    deleteTargetPod(m);
    if (vmi && handedOff(vmi, m)) {
      const state: MigrationState = {
        ...vmiStatus(vmi).migrationState,
        ...extra,
        endTimestamp: ended(m),
        completed: true,
        failed: true,
        failureReason: why,
      };
      setVmiState(vmi, state);
      setPhase(m, 'Failed', { migrationState: state });
    } else {
      event(m, 'Warning', 'FailedMigration', why);
      setPhase(m, 'Failed');
    }
    countFailure(vmi);
  };

  const succeed = (m: KubeObject, vmi: KubeObject) => {
    const st = vmiStatus(vmi).migrationState ?? {};
    const target = st.targetNode ?? '';
    const state: MigrationState = { ...st, endTimestamp: ended(m), completed: true, failed: false };
    // The VMI moves first, so the lifecycle controller never sees it without a live launcher.
    mutate(store, RES.vmis, vmi, (v) => {
      v.metadata.labels = { ...v.metadata.labels, 'kubevirt.io/nodeName': target };
    });
    const targetPod = targetPodOf(m);
    mutateStatus(store, RES.vmis, vmi, (v) => {
      const s: VmiStatus = { ...vmiStatus(v), nodeName: target, migrationState: state };
      delete s.evacuationNodeName;
      if (targetPod) s.activePods = { [targetPod.metadata.uid ?? '']: target };
      v.status = s;
    });
    setPhase(m, 'Succeeded', { migrationState: state });
    event(m, 'Normal', 'SuccessfulMigration', 'Source node reported migration succeeded');
    history.failures.delete(vmi.metadata.uid ?? '');
    completeSourceLaunchers(vmi, st.sourceNode, targetPod?.metadata.name);
  };

  /** The source launcher's domain is gone: the pod completes, then is removed. */
  const completeSourceLaunchers = (vmi: KubeObject, source: string | undefined, targetPod?: string) => {
    for (const pod of store.list(RES.pods, {
      namespace: vmi.metadata.namespace,
      labelSelector: 'kubevirt.io=virt-launcher',
    })) {
      if (pod.metadata.labels?.['kubevirt.io/created-by'] !== vmi.metadata.uid) continue;
      if (podNode(pod) !== source || pod.metadata.name === targetPod) continue;
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

  const schedule = (m: KubeObject, ms: number) => timers.set(m.metadata.uid ?? '', ms, () => advance(m));

  /** Scheduling: binds the target pod once a node has room; fails after 5 min unschedulable. */
  const scheduling = (m: KubeObject, vmi: KubeObject, pod: KubeObject) => {
    if (podNode(pod)) {
      if ((pod.status as { phase?: string } | undefined)?.phase === 'Running') {
        setPhase(m, 'Scheduled');
        return schedule(m, timings.migrationStepSeconds * 1000);
      }
      return schedule(m, timings.migrationStepSeconds * 1000); // the kubelet starts it
    }
    const source = vmiStatus(vmi).nodeName ?? '';
    const node = pickNode(store, { siblings: launchers(), exclude: [source] });
    if (node) {
      mutate(store, RES.pods, pod, (p) => {
        p.spec = { ...(p.spec as object), nodeName: node };
        p.status = { phase: 'Pending' };
      });
      return schedule(m, timings.migrationStepSeconds * 1000);
    }
    // its creationTimestamp is real time; the timeout runs on the scenario clock
    const created = store.stamps.metaMoment(pod, 'creationTimestamp');
    const waited = Number.isNaN(created) ? 0 : clock.now() - created;
    if (waited >= UNSCHEDULABLE_TIMEOUT_MS) {
      event(
        m,
        'Warning',
        'MigrationTargetPodUnschedulable',
        `unschedulable pod ${pod.metadata.namespace}/${pod.metadata.name} timeout period exceeded`,
      );
      return fail(m, vmi, 'Migration target pod was removed during active migration.');
    }
    schedule(m, Math.min(UNSCHEDULABLE_TIMEOUT_MS - waited, 10_000));
  };

  /** Scheduled → PreparingTarget: the handoff to the target; the VMI's migrationState appears. */
  const handOff = (m: KubeObject, vmi: KubeObject, pod: KubeObject) => {
    setVmiState(vmi, {
      migrationUid: m.metadata.uid ?? '',
      sourceNode: vmiStatus(vmi).nodeName ?? '',
      targetNode: podNode(pod) ?? '',
      targetPod: pod.metadata.name ?? '',
      mode: 'PreCopy',
      completed: false,
      failed: false,
    });
    setPhase(m, 'PreparingTarget');
  };

  /** One step forward, run by the phase timer. */
  const advance = (ref: KubeObject) => {
    const m = tryGet(store, RES.vmims, ref.metadata.namespace, ref.metadata.name ?? '');
    if (!m || m.metadata.uid !== ref.metadata.uid || m.metadata.deletionTimestamp || isFinal(m)) return;
    const vmi = vmiOf(store, m);
    if (!vmi || !isRunning(vmi)) return fail(m, vmi, 'Migration failed vmi shutdown during migration.');
    const pod = targetPodOf(m);
    if (!pod) return fail(m, vmi, 'Migration target pod was removed during active migration.');
    const phase = phaseOf(m) ?? '';
    if (phase === 'Scheduling') return scheduling(m, vmi, pod);
    if (phase === 'Scheduled') {
      handOff(m, vmi, pod);
      return schedule(m, timings.migrationStepSeconds * 1000);
    }
    if (phase === 'PreparingTarget') {
      setPhase(m, 'TargetReady');
      return schedule(m, timings.migrationStepSeconds * 1000);
    }
    if (phase === 'TargetReady') {
      const uid = vmi.metadata.uid ?? '';
      history.attempts.set(uid, (history.attempts.get(uid) ?? 0) + 1);
      setVmiState(vmi, { ...vmiStatus(vmi).migrationState, startTimestamp: now() });
      setPhase(m, 'Running');
      return schedule(m, migrationMs(vmi, timings.migrationSeconds));
    }
    if (phase === 'Running') {
      const attempt = history.attempts.get(vmi.metadata.uid ?? '') ?? 1;
      const failFirst = Number(vmi.metadata.annotations?.[ANN.failFirstAttempts] ?? 0);
      if (attempt <= failFirst)
        fail(m, vmi, `injected failure (attempt ${attempt} of the first ${failFirst})`);
      else succeed(m, vmi);
      deps.wake();
    }
  };

  const launchers = () => store.list(RES.pods, { labelSelector: 'kubevirt.io=virt-launcher' });

  /** Pending → Scheduling: the target pod is created, bound where a node has room. */
  const start = (m: KubeObject, vmi: KubeObject): void => {
    if (!createTargetPod(store, vmi, m.metadata.uid, launchers(), now()))
      event(
        m,
        'Warning',
        'MigrationTargetPodUnschedulable',
        `Migration target pod for VMI [${vmi.metadata.namespace}/${vmi.metadata.name}] is currently unschedulable.`,
      );
    setPhase(m, 'Scheduling');
    schedule(m, timings.migrationStepSeconds * 1000);
  };

  /** Milliseconds KubeVirt still holds an evacuation migration Pending after failed ones (0 = none). */
  const backoffLeft = (m: KubeObject, vmi: KubeObject): number => {
    if (!m.metadata.annotations?.[EVACUATION_ANNOTATION]) return 0;
    const f = history.failures.get(vmi.metadata.uid ?? '');
    if (!f) return 0;
    const wait = Math.min(MAX_BACKOFF_MS, timings.migrationBackoffSeconds * 1000 * 2 ** (f.count - 1));
    return Math.max(0, f.lastAt + wait - clock.now());
  };

  /** Cancel: before the handoff the migration fails at once; after it the source aborts it. */
  const abort = (m: KubeObject) => {
    if (isFinal(m) || !phaseOf(m)) return timers.cancel(m.metadata.uid ?? '');
    const vmi = vmiOf(store, m);
    if (handedOff(vmi, m)) {
      fail(m, vmi, 'Live migration aborted', { abortRequested: true, abortStatus: 'Succeeded' });
    } else {
      fail(m, vmi, 'Migration failed due to being canceled');
    }
  };

  /** Admits new migrations (finalizer, label, Pending) and starts Pending ones while slots are free. */
  const reconcile = () => {
    for (const m of store.list(RES.vmims)) {
      if (m.metadata.deletionTimestamp) {
        abort(m);
        mutate(store, RES.vmims, m, (o) => {
          o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== MIGRATION_FINALIZER);
        });
        continue;
      }
      if (IN_FLIGHT.has(phaseOf(m) ?? '')) {
        // the source's virt-handler sees its domain go: a migration whose VMI was stopped or
        // deleted (and maybe created again under its name) fails at once
        const vmi = vmiOf(store, m);
        if (!vmi || !isRunning(vmi)) fail(m, vmi, 'Migration failed vmi shutdown during migration.');
        continue;
      }
      if (phaseOf(m)) continue;
      mutate(store, RES.vmims, m, (o) => {
        o.metadata.finalizers = [...new Set([...(o.metadata.finalizers ?? []), MIGRATION_FINALIZER])];
        o.metadata.labels = { ...o.metadata.labels, 'kubevirt.io/vmi-name': vmiNameOf(o) };
      });
      const vmi = vmiOf(store, m);
      if (!vmi || !isRunning(vmi)) {
        fail(m, vmi, 'Migration failed vmi shutdown during migration.');
        continue;
      }
      if (m.metadata.uid && vmi.metadata.uid) vmiUids.set(m.metadata.uid, vmi.metadata.uid);
      const sourcePod = activeLauncher(store, vmi)?.metadata.name;
      setPhase(m, 'Pending', sourcePod ? { migrationState: { sourcePod } } : {});
    }
    startPending();
    observe();
  };

  const sourceNodeOf = (m: KubeObject): string =>
    vmiStatus(vmiOf(store, m) ?? { metadata: {} }).nodeName ?? '';

  const startPending = () => {
    const settings = readSettings(store);
    const current = store.list(RES.vmims).filter((m) => !m.metadata.deletionTimestamp);
    const active = current.filter((m) => IN_FLIGHT.has(phaseOf(m) ?? ''));
    const perNode = new Map<string, number>();
    for (const m of active) perNode.set(sourceNodeOf(m), (perNode.get(sourceNodeOf(m)) ?? 0) + 1);
    let total = active.length;
    // oldest first, by the exact moment (a real second of stamps is many scenario seconds), then in
    // the order they were created: KubeVirt's queue is FIFO, never by the random name suffix
    const created = (m: KubeObject) => store.stamps.createdOrder(m);
    const pending = current
      .filter((m) => phaseOf(m) === 'Pending')
      .sort((a, b) => {
        const [x, y] = [created(a), created(b)];
        return x[0] - y[0] || x[1] - y[1];
      });
    for (const m of pending) {
      if (total >= settings.parallelMigrationsPerCluster) break;
      const vmi = vmiOf(store, m);
      if (!vmi || !isRunning(vmi)) {
        fail(m, vmi, 'Migration failed vmi shutdown during migration.');
        continue;
      }
      const source = vmiStatus(vmi).nodeName ?? '';
      if ((perNode.get(source) ?? 0) >= settings.parallelOutboundMigrationsPerNode) continue;
      const wait = backoffLeft(m, vmi);
      if (wait > 0) {
        if (!toldBackoff.has(m.metadata.uid ?? '')) {
          toldBackoff.add(m.metadata.uid ?? '');
          event(
            vmi,
            'Warning',
            'MigrationBackoff',
            `backoff migrating vmi ${vmi.metadata.namespace}/${vmi.metadata.name}`,
          );
        }
        timers.set(`backoff/${m.metadata.uid}`, wait, deps.wake);
        continue;
      }
      start(m, vmi);
      total++;
      perNode.set(source, (perNode.get(source) ?? 0) + 1);
    }
  };

  /** Records the concurrency reached (tests and benchmarks assert the limits with it). */
  const observe = () => {
    const active = store.list(RES.vmims).filter((m) => IN_FLIGHT.has(phaseOf(m) ?? ''));
    history.maxInFlight = Math.max(history.maxInFlight, active.length);
    const perNode = new Map<string, number>();
    for (const m of active) perNode.set(sourceNodeOf(m), (perNode.get(sourceNodeOf(m)) ?? 0) + 1);
    for (const [n, c] of perNode)
      history.maxInFlightPerNode.set(n, Math.max(history.maxInFlightPerNode.get(n) ?? 0, c));
  };

  /** A migration deleted without our finalizer (or after it was removed) is aborted too. */
  const onDeleted = (m: KubeObject) => {
    abort(m);
    vmiUids.delete(m.metadata.uid ?? '');
  };

  return { reconcile, onDeleted };
}
