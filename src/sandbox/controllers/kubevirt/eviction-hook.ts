// virt-api's eviction interceptor (KubeVirt's pkg/virt-api/webhooks/validating-webhook/admitters/
// pod-eviction-admitter.go, admitLauncherPod): evicting the launcher pod of a VMI that should move
// marks it for evacuation (status.evacuationNodeName) and answers 429, so drains wait while it
// migrates. A repeated eviction answers "Evacuation in progress" from v1.5; up to v1.4 the webhook
// let it through and the VMI's PodDisruptionBudget refused it. A migration target pod is never evicted.
import type { KubeObject, Status } from '../../kube/types.ts';
import { failure } from '../../kube/status.ts';
import { RES, mutateStatus, type StoreLike } from '../store.ts';
import { isTerminal, podNode } from '../util.ts';
import { readSettings } from './config.ts';
import { effectiveStrategy, notMigratableReason, vmiStatus } from './vmi.ts';

export type EvictionHookLike = (pod: KubeObject, eviction: KubeObject) => Status | undefined;

/** The first minor version whose webhook answers a repeated eviction itself. */
export const IN_PROGRESS_FROM_MINOR = 5;

const WEBHOOK = 'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request';
const denied = (message: string): Status => failure(429, 'TooManyRequests', `${WEBHOOK}: ${message}`);

/** What the VMI's KubeVirt-made PodDisruptionBudget answers while it protects the launcher pod. */
const pdbRefusal = (vmi: KubeObject): Status =>
  failure(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
    details: {
      causes: [
        {
          reason: 'DisruptionBudget',
          message: `The disruption budget kubevirt-disruption-budget-${vmi.metadata.name ?? ''} needs 1 healthy pods and has 1 currently`,
        },
      ],
    },
  });

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
    if (!vmi || isTerminal(pod)) return undefined;
    const settings = readSettings(store);
    const strategy = effectiveStrategy(vmi, settings);
    const reason = notMigratableReason(vmi);
    if (strategy === 'None' || (strategy === 'LiveMigrateIfPossible' && reason)) return undefined;
    if (strategy === 'LiveMigrate' && reason)
      return denied(
        `VMI ${vmi.metadata.name ?? ''} is configured with an eviction strategy but is not live-migratable`,
      );
    const key = `${vmi.metadata.namespace}/${vmi.metadata.name}`;
    const triggered = `Eviction triggered evacuation of VMI "${key}"`;
    if (vmiStatus(vmi).evacuationNodeName) {
      return settings.minor >= IN_PROGRESS_FROM_MINOR
        ? denied(`Evacuation in progress: ${triggered}`)
        : pdbRefusal(vmi);
    }
    if (vmiStatus(vmi).nodeName !== podNode(pod)) return denied('Eviction request for target Pod');
    if (!isDryRun(eviction)) {
      mutateStatus(store, RES.vmis, vmi, (v) => {
        v.status = { ...vmiStatus(v), evacuationNodeName: podNode(pod) };
      });
      onEvacuation();
    }
    return denied(triggered);
  };
}
