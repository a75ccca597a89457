// Node mode manual (drainer.dev/migration-mode=manual): the operator moves the VMIs with their own
// tools. drainer neither taints, evicts nor creates migrations (not for External VMIs either) and
// only watches the node until no VMI is left on it; the evacuation, and so the drain gate, waits.
import { waitUntilEmpty } from '../../core/backends/manual-wait.ts';
import type { EvacuationContext, Outcome, WorkloadProgress } from '../../core/backends/plugin.ts';
import { isTransientError } from '../../errors.ts';
import { MIGRATION_MODE_KEY } from '../../names.ts';
import { stillHere, vmiKey } from './classify.ts';
import { podRef, podsOfVmis } from './pods.ts';
import type { KubevirtApi } from './port.ts';
import type { Vmi } from './types.ts';

export interface ManualDeps {
  readonly api: Pick<KubevirtApi, 'listVmis' | 'listVmPods'>;
  readonly pollMs: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export async function waitForOthers(
  plugin: string,
  node: string,
  deps: ManualDeps,
  ctx: EvacuationContext,
): Promise<Outcome> {
  const seen = new Map<string, Vmi>();
  const left = await waitUntilEmpty(
    {
      list: async (signal) => (await deps.api.listVmis(node, signal)).filter(stillHere),
      retryable: isTransientError,
      listFailed: 'listing the VMIs of the node failed; trying again',
      listed: (vmis) => {
        // by uid: a VMI created again under its name is another one, its launcher pods too
        for (const v of vmis) seen.set(v.metadata.uid ?? vmiKey(v), v);
        ctx.progress(progress(seen, vmis, node));
      },
      now: Date.now, // the deadline is wall-clock, as in the plugin's follow
      sleep: (signal) => deps.sleep(deps.pollMs, signal),
    },
    ctx,
  );
  const names = left.map((v) => `${vmiKey(v)} (${v.status?.phase ?? 'Unknown'})`);
  // the launcher pods of VMIs moved by someone else are theirs to clean up, not the pod drain's
  const uids = new Set([...seen.values()].flatMap((v) => v.metadata.uid ?? []));
  const pods = await deps.api.listVmPods(node, ctx.signal).catch(() => []);
  return {
    plugin,
    succeeded: left.length === 0 && !ctx.signal.aborted,
    workloads: progress(seen, left, node),
    handledPods: podsOfVmis(pods, uids).map(podRef),
    message:
      left.length === 0
        ? `node ${node} ${MIGRATION_MODE_KEY}=manual: no VMI left; ${seen.size} moved by someone else`
        : `node ${node} ${MIGRATION_MODE_KEY}=manual: still on the node: ${names.join(', ')}`,
  };
}

function progress(seen: Map<string, Vmi>, left: readonly Vmi[], node: string): WorkloadProgress[] {
  const still = new Set(left.map((v) => v.metadata.uid ?? vmiKey(v)));
  return [...seen].map(([key, v]) => ({
    id: key,
    name: vmiKey(v),
    state: still.has(key) ? 'pending' : 'succeeded',
    action: 'external',
    source: node,
    attempts: 0,
    message: still.has(key)
      ? `waiting for someone else to move it (node ${MIGRATION_MODE_KEY}=manual)`
      : 'left the node (moved, stopped or deleted by someone else)',
  }));
}
