// Simulated node lifecycle controller: a cordoned node carries node.kubernetes.io/unschedulable:NoSchedule.
import { createLoop, watchAll } from './loop.ts';
import { RES, mutate } from './store.ts';
import type { StartController } from './types.ts';
import { taintsOf, type Taint } from './util.ts';

export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

export const startNodeLifecycle: StartController = ({ store, log }, signal) => {
  const reconcile = () => {
    for (const node of store.list(RES.nodes)) {
      const want = Boolean((node.spec as { unschedulable?: boolean } | undefined)?.unschedulable);
      const has = taintsOf(node).some((t) => t.key === UNSCHEDULABLE_TAINT && t.effect === 'NoSchedule');
      if (want === has) continue;
      mutate(store, RES.nodes, node, (n) => {
        const spec = (n.spec ??= {}) as { taints?: Taint[] };
        const others = (spec.taints ?? []).filter((t) => t.key !== UNSCHEDULABLE_TAINT);
        if (want)
          others.push({ key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule', timeAdded: store.stamps.at() });
        if (others.length) spec.taints = others;
        else delete spec.taints;
      });
    }
  };
  const loop = createLoop(reconcile, signal, (e) => log?.warn({ err: e }, 'sandbox node lifecycle'));
  watchAll((r, fn) => store.subscribe(r, fn), [RES.nodes], loop, signal);
  loop.trigger();
};
