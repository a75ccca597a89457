// An agent that stops for good (no DaemonSet places a successor on its node: drainer.dev/agent=disabled,
// a nodeSelector that leaves it out) in the middle of an evacuation: nobody goes on with it. Its
// record must not say Evacuating for good: its slot Lease runs out, the next nodes take the slots,
// and status, the metrics' reader and the budget would count one evacuation too many (issue 48
// item 5). It says Failed, and why; what drainer changed stays in it, so an agent put back resumes.
// So does a record Queued for a fleet slot: nobody will take a slot for it, and while its
// drainer.dev/queued label stayed, the waiters behind it waited a lease duration for it at every
// hand-off (chaos seed 13). Failed, the label goes in the same write; the record keeps its place
// (queueStamp), so the agent put back queues again where it was.
import type { Logger } from '../../observability/logger.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { guardedPersist } from '../record/record-write.ts';
import {
  errorText,
  NodeRecordStore,
  readRecord,
  STATE_ANNOTATION,
  type NodeRecord,
} from '../record/record.ts';

/** A write at the stop: bounded, as the agent's own signal has aborted. */
const STOP_WRITE_MS = 10_000;

/**
 * What the plugins may still finish at that stop (Nova: confirm the resizes it asked for as they
 * land): within the DaemonSet's 30 s grace, after the 2 s look for a successor and before the
 * bounded look at what is left on the node (10 s).
 */
export const LAST_STOP_FINISH_MS = 15_000;

/** Ends the record's Evacuating or Queued; answers the record as it was, when it ended one. */
export async function endEvacuationForGood(o: {
  cluster: Cluster;
  nodeName: string;
  log: Logger;
  now: () => Date;
}): Promise<NodeRecord | undefined> {
  const node = await o.cluster.getNode(o.nodeName);
  const read = readRecord(node?.metadata?.annotations?.[STATE_ANNOTATION]);
  if (!node || read.kind !== 'ok') return undefined;
  const { phase } = read.record;
  if (phase !== 'Evacuating' && phase !== 'Queued') return undefined;
  const store = new NodeRecordStore({
    record: read.record,
    persist: guardedPersist({
      cluster: o.cluster,
      nodeName: o.nodeName,
      node,
      signal: AbortSignal.timeout(STOP_WRITE_MS),
    }),
  });
  const why = `(no agent DaemonSet places one on node ${o.nodeName})`;
  const back = `put the agent back (kubectl label node ${o.nodeName} drainer.dev/agent-) and it`;
  const text =
    phase === 'Queued'
      ? `its agent stopped for good while the node queued for a fleet slot ${why}: it left the queue, as nobody would take a slot for it; ${back} queues again in its place`
      : `its agent stopped for good in the middle of the evacuation ${why}: nobody goes on with it; ${back} resumes`;
  await store.update({
    phase: 'Failed',
    slot: undefined,
    // Failed as any attempt that ended: the agent put back tries it again from the record (attempt.ts)
    resumes: undefined,
    lastError: errorText(text),
    attemptedAt: o.now().toISOString(),
  });
  o.log.warn({ node: o.nodeName }, `record marked Failed: ${text}`);
  return read.record;
}
