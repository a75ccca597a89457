// The Cluster API hook's port on a real API server: Machines (cluster.x-k8s.io/v1beta1, every
// namespace: the nodeRef is in status, which no field selector of a custom resource can match),
// watched once their CRD is served; merge patches of one annotation; Events on the Machine.
import { isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { MERGE_PATCH } from '../../kube/http.ts';
import type { KubeObject } from '../../kube/types.ts';
import { runWatch } from '../../kube/watch.ts';
import type { Logger } from '../../observability/logger.ts';
import { waitForCrd } from '../cluster/crd-appears.ts';
import type { MachinePort } from './hook.ts';
import { MACHINE_API_VERSION, PRE_DRAIN_HOOK, PRE_DRAIN_HOOK_OWNER, type MachineObject } from './machine.ts';

export const machinesPath = `/apis/${MACHINE_API_VERSION}/machines`;
const MACHINE_CRD = 'machines.cluster.x-k8s.io';

const machinePath = (m: MachineObject) =>
  `/apis/${MACHINE_API_VERSION}/namespaces/${encodeURIComponent(m.metadata?.namespace ?? '')}/machines/${encodeURIComponent(m.metadata?.name ?? '')}`;

/** Is the Machine resource served? (404: Cluster API is not installed here) */
export async function machinesServed(k: KubeClients, signal?: AbortSignal): Promise<boolean> {
  try {
    await k.request({ path: machinesPath, query: { limit: 1 }, ...(signal ? { signal } : {}) });
    return true;
  } catch (err) {
    if (isNotFoundError(err)) return false;
    throw err;
  }
}

/** Puts drainer's hook on the Machine (on) or takes it off: one merge patch; a Machine gone is no error. */
export async function setMachineHook(k: KubeClients, m: MachineObject, on: boolean): Promise<void> {
  try {
    await k.request({
      method: 'PATCH',
      path: machinePath(m),
      contentType: MERGE_PATCH,
      body: { metadata: { annotations: { [PRE_DRAIN_HOOK]: on ? PRE_DRAIN_HOOK_OWNER : null } } },
    });
  } catch (err) {
    if (!isNotFoundError(err)) throw err;
  }
}

export interface KubeMachinePortOptions {
  readonly k: KubeClients;
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly timeoutSeconds?: number;
  /** Without the right to read CRDs: how often an absent Machine resource is looked for (default 10 min). */
  readonly recheckMs?: number;
}

export function kubeMachinePort(o: KubeMachinePortOptions): MachinePort {
  const { k, log } = o;
  return {
    async watch(cb) {
      const served = await machinesServed(k, cb.signal).catch(() => false);
      if (!served) {
        cb.onAbsent?.();
        const appeared = await waitForCrd({
          k,
          log,
          crd: MACHINE_CRD,
          served: (s) => machinesServed(k, s),
          fallbackMs: o.recheckMs ?? 600_000,
          signal: cb.signal,
        });
        if (!appeared) return;
        log.info('Cluster API Machines are served: holding the pre-drain hook');
      }
      await runWatch<KubeObject>({
        k,
        log,
        path: machinesPath,
        signal: cb.signal,
        ...(o.timeoutSeconds ? { timeoutSeconds: o.timeoutSeconds } : {}),
        onEvent: (type, m) => cb.onEvent(type, m),
        onSynced: () => cb.onSynced(),
      });
    },
    setHook: (m, on) => setMachineHook(k, m, on),
    async annotateNode(node, key, value) {
      await k.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${encodeURIComponent(node)}`,
        contentType: MERGE_PATCH,
        body: { metadata: { annotations: { [key]: value } } },
      });
    },
    event: (m, type, reason, message) =>
      o.events.record(
        {
          apiVersion: MACHINE_API_VERSION,
          kind: 'Machine',
          name: m.metadata?.name ?? '',
          ...(m.metadata?.namespace ? { namespace: m.metadata.namespace } : {}),
        },
        type,
        reason,
        message,
      ),
  };
}
