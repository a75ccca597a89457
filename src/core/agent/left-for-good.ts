// An agent that stops for good (no DaemonSet places a successor on its node: drainer.dev/agent=disabled,
// a nodeSelector that leaves it out) in the middle of an evacuation: nobody goes on with it. Its
// record must not say Evacuating for good: its slot Lease runs out, the next nodes take the slots,
// and status, the metrics' reader and the budget would count one evacuation too many (issue 48
// item 5). It says Failed, and why; what drainer changed stays in it, so an agent put back resumes.
import type { Logger } from '../../observability/logger.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { guardedPersist } from '../record/record-write.ts';
import { errorText, NodeRecordStore, readRecord, STATE_ANNOTATION } from '../record/record.ts';

/** A write at the stop: bounded, as the agent's own signal has aborted. */
const STOP_WRITE_MS = 10_000;

export async function endEvacuationForGood(o: {
  cluster: Cluster;
  nodeName: string;
  log: Logger;
  now: () => Date;
}): Promise<boolean> {
  const node = await o.cluster.getNode(o.nodeName);
  const read = readRecord(node?.metadata?.annotations?.[STATE_ANNOTATION]);
  if (!node || read.kind !== 'ok' || read.record.phase !== 'Evacuating') return false;
  const store = new NodeRecordStore({
    record: read.record,
    persist: guardedPersist({
      cluster: o.cluster,
      nodeName: o.nodeName,
      node,
      signal: AbortSignal.timeout(STOP_WRITE_MS),
    }),
  });
  const text = `its agent stopped for good in the middle of the evacuation (no agent DaemonSet places one on node ${o.nodeName}): nobody goes on with it; put the agent back (kubectl label node ${o.nodeName} drainer.dev/agent-) and it resumes`;
  await store.update({
    phase: 'Failed',
    slot: undefined,
    lastError: errorText(text),
    attemptedAt: o.now().toISOString(),
  });
  o.log.warn({ node: o.nodeName }, `record marked Failed: ${text}`);
  return true;
}
