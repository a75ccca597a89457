// Step 4 of design.md §1: evict the pods once the VMs have moved, except those a plugin (or the
// drain gate) takes care of, and record how the drain went.
import { gateSkip } from '../gate/step.ts';
import { maintenanceRef, type MaintenanceObject } from '../cluster/objects.ts';
import type { Outcome } from '../backends/plugin.ts';
import { errorText } from '../record/record.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { EvacuationControl } from './control.ts';
import { running } from './maintenance.ts';

/** Drains the pods; answers the failure text when the drain failed. */
export async function drainPods(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  outcomes: readonly Outcome[],
  ctl: EvacuationControl,
): Promise<{ failure?: string }> {
  const handled = new Map<string, string>();
  for (const o of outcomes)
    for (const p of o.handledPods ?? []) handled.set(`${p.namespace}/${p.name}`, o.plugin);
  await run.event('Normal', 'DrainStarted', `evicting pods from node ${run.nodeName}`);
  let lastPercent = -1;
  const result = await run.deps.cluster.drain({
    node: run.nodeName,
    signal: ctl.signal,
    log: run.log,
    involved: [run.ref, ...(nm ? [maintenanceRef(nm)] : [])],
    skipPod: (pod) => {
      const gate = gateSkip(run, pod);
      if (gate) return gate;
      const plugin = handled.get(`${pod.namespace}/${pod.name}`);
      return plugin ? `handled by the ${plugin} plugin` : undefined;
    },
    onProgress: (p) => {
      const percent = p.total ? Math.floor((p.evicted * 100) / p.total) : 100;
      if (percent === lastPercent) return;
      lastPercent = percent;
      const pods = {
        total: p.total,
        evicted: p.evicted,
        pending: p.pending.map((x) => `${x.namespace}/${x.name}`),
      };
      void running(run, nm, 'draining pods', pods).catch((err: unknown) =>
        run.log.debug({ err }, 'NodeMaintenance progress not written'),
      );
      // the record too: a cordon has no NodeMaintenance, and status reads the record
      void run.store
        .update({ pods: { total: p.total, evicted: p.evicted, failed: 0 } })
        .catch((err: unknown) => run.log.debug({ err }, 'pod drain progress not written to the record'));
    },
  });
  await run.store.update({
    pods: { total: result.total, evicted: result.evicted.length, failed: result.failed.length },
    drain: {
      succeeded: result.succeeded,
      total: result.total,
      evicted: result.evicted.length,
      ignored: result.ignored.length,
      failed: result.failed.map((f) => ({
        pod: `${f.pod.namespace}/${f.pod.name}`,
        reason: errorText(f.reason),
      })),
    },
  });
  if (result.succeeded) {
    await run.event('Normal', 'DrainSucceeded', `evicted ${result.evicted.length} of ${result.total} pods`);
    return {};
  }
  const failed = result.failed.map((f) => `${f.pod.namespace}/${f.pod.name}: ${f.reason}`).join('; ');
  return { failure: `drain failed: ${failed || 'pods remain on the node'}` };
}
