// What every simulated controller receives.
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../clock.ts';
import type { ApiExtension, CreateHook } from '../kube/extensions.ts';
import type { EvictionHookLike } from './kubevirt/eviction-hook.ts';
import type { StoreLike } from './store.ts';

export interface ControllerTimings {
  /** From pod creation to Running/Ready, simulated seconds. */
  podStartSeconds: number;
  /** Each migration phase before Running. */
  migrationStepSeconds: number;
  /** Default duration of a VMI's memory copy. */
  migrationSeconds: number;
  /** First wait before an evacuation migration is retried; doubles per failure (max 5 min). */
  migrationBackoffSeconds: number;
}

export const defaultTimings: ControllerTimings = {
  podStartSeconds: 2,
  migrationStepSeconds: 0.5,
  migrationSeconds: 8,
  migrationBackoffSeconds: 20,
};

export interface ControllerDeps {
  store: StoreLike;
  clock: Clock;
  timings: ControllerTimings;
  /** Images the kubelet cannot pull (their pods stay Pending in ImagePullBackOff). */
  unpullableImages?: readonly string[];
  /** The API server's eviction hooks (KubeVirt adds one). */
  evictionHooks?: EvictionHookLike[];
  /** The API server's validating admission on create (KubeVirt's VMIM admitter). */
  createHooks?: CreateHook[];
  /** The API server's aggregated groups (KubeVirt's subresources.kubevirt.io). */
  extensions?: ApiExtension[];
  log?: Logger;
}

export type ControllerName = 'kubelet' | 'replicaset' | 'disruption' | 'nodeLifecycle' | 'kubevirt';

/** Starts the controller; it stops when the signal aborts. */
export type StartController = (deps: ControllerDeps, signal: AbortSignal) => void;
