// One pass's view of a node (NodeRun): its record store, log, Events, and, while it evacuates,
// the Node and NodeMaintenances as the agent's watches see them now.
import { nodeRef, type MaintenanceObject, type NodeObject, type ObjectRef } from '../cluster/objects.ts';
import { NodeRecordStore, type NodeRecord } from '../record/record.ts';
import { guardedPersist } from '../record/record-write.ts';
import { wantGate } from '../gate/step.ts';
import type { LiveView, NodeRun, ReconcilerDeps } from './run-context.ts';

export interface NodeRunInput {
  readonly deps: ReconcilerDeps;
  readonly nodeName: string;
  readonly node: NodeObject;
  readonly maintenances: readonly MaintenanceObject[];
  readonly record: NodeRecord | undefined;
  readonly signal: AbortSignal;
  readonly now: () => Date;
  /** The Node as the watch shows it while the node evacuates (undefined otherwise). */
  readonly liveNode: () => NodeObject | undefined;
  /** Event writes under way: the reconciler awaits them at a pass's end. */
  readonly events: Set<Promise<void>>;
}

export function newNodeRun(input: NodeRunInput): NodeRun {
  const { deps, nodeName, node, maintenances, record, signal, now, liveNode, events } = input;
  const log = deps.log.child({ node: nodeName });
  const ref = nodeRef(node, nodeName);
  const store = new NodeRecordStore({
    record,
    persist: guardedPersist({ cluster: deps.cluster, nodeName, node, signal }),
    // every change of the record may change what the drain gate should be (with the Node as the
    // watch shows it while it evacuates: a release since the pass read it counts, a restore's never)
    onWritten: (rec) => wantGate(deps.gate, nodeName, rec, liveNode() ?? node),
  });
  return {
    deps,
    nodeName,
    node,
    maintenances,
    store,
    log,
    signal,
    ref,
    now,
    // Started, not awaited: the pass goes on while the Event is written (in order per call).
    event: async (type, reason, message, also?: ObjectRef) => {
      const write = (async () => {
        for (const target of also ? [ref, also] : [ref]) {
          await deps.cluster
            .event(target, type, reason, message)
            .catch((err: unknown) => log.warn({ err, reason }, 'could not record Event'));
        }
      })();
      events.add(write);
      void write.finally(() => events.delete(write));
    },
  };
}

/** What the watches see of a node while it evacuates, and the sleeps they cut short. */
export interface LiveState {
  node: NodeObject;
  maintenances: readonly MaintenanceObject[];
  readonly wakes: Set<() => void>;
  readonly record: () => NodeRecord | undefined;
}

export function liveView(s: LiveState): LiveView {
  return {
    node: () => s.node,
    maintenances: () => s.maintenances,
    sleep: (ms, signal) =>
      new Promise((resolve) => {
        const done = () => {
          clearTimeout(t);
          s.wakes.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const t = setTimeout(done, ms);
        s.wakes.add(done);
        signal.addEventListener('abort', done, { once: true });
      }),
  };
}
