// virt-api's eviction interceptor: evicting the launcher pod of a VMI that should move starts an
// evacuation (status.evacuationNodeName) and answers 429, so drains wait while the VMI migrates.
import type { KubeObject, Status } from '../../kube/types.ts';
import { failure } from '../../kube/status.ts';
import { RES, mutateStatus, type StoreLike } from '../store.ts';
import { podNode } from '../util.ts';
import { readSettings } from './config.ts';
import { effectiveStrategy, isRunning, notMigratableReason, vmiKey, vmiStatus } from './vmi.ts';

export type EvictionHookLike = (pod: KubeObject, eviction: KubeObject) => Status | undefined;

const WEBHOOK = 'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request';
const denied = (message: string): Status => failure(429, 'TooManyRequests', `${WEBHOOK}: ${message}`);

function vmiOfLauncher(store: StoreLike, pod: KubeObject): KubeObject | undefined {
  if (pod.metadata.labels?.['kubevirt.io'] !== 'virt-launcher') return undefined;
  const uid = pod.metadata.labels['kubevirt.io/created-by'];
  return store.list(RES.vmis, { namespace: pod.metadata.namespace }).find((v) => v.metadata.uid === uid);
}

const isDryRun = (eviction: KubeObject): boolean =>
  ((eviction.deleteOptions as { dryRun?: string[] } | undefined)?.dryRun?.length ?? 0) > 0;

/** Builds the hook; `onEvacuation` wakes the evacuation controller. */
export function kubevirtEvictionHook(store: StoreLike, onEvacuation: () => void): EvictionHookLike {
  return (pod, eviction) => {
    const vmi = vmiOfLauncher(store, pod);
    // Only the pod the VMI runs in is guarded; finished or target pods are evicted normally.
    if (!vmi || !isRunning(vmi) || podNode(pod) !== vmiStatus(vmi).nodeName) return undefined;
    const settings = readSettings(store);
    const strategy = effectiveStrategy(vmi, settings);
    const reason = notMigratableReason(vmi);
    if (strategy === 'None' || (strategy === 'LiveMigrateIfPossible' && reason)) return undefined;
    if (strategy === 'LiveMigrate' && reason) {
      return denied(
        `VMI ${vmiKey(vmi)} has eviction strategy LiveMigrate but cannot migrate (LiveMigratable=False: ${reason})`,
      );
    }
    if (vmiStatus(vmi).evacuationNodeName) return denied(`Evacuation in progress of VMI ${vmiKey(vmi)}`);
    if (!isDryRun(eviction)) {
      mutateStatus(store, RES.vmis, vmi, (v) => {
        v.status = { ...vmiStatus(v), evacuationNodeName: podNode(pod) };
      });
      onEvacuation();
    }
    return denied(`Eviction triggered evacuation of VMI ${vmiKey(vmi)}`);
  };
}
