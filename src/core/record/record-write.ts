// The record's writes carry the resourceVersion of the Node they were computed from (issue 23
// item 5): a 409 means someone wrote the Node since. If the record there is still the one this
// writer last wrote (a cordon, a label, the kubelet), the write goes again on the new version; if
// the record changed (another agent, a restore), it throws RecordConflictError and the pass reads
// again and decides again, so a late writer (an abandoned plugin) never overwrites a newer record.
import { isConflictError, RecordConflictError } from '../../errors.ts';
import type { Cluster } from '../cluster/cluster.ts';
import type { NodeObject } from '../cluster/objects.ts';
import { STATE_ANNOTATION, type PersistRecord } from './record.ts';
import { retryTransient } from '../agent/retry.ts';

const ATTEMPTS = 5;

export function guardedPersist(o: {
  cluster: Cluster;
  nodeName: string;
  /** The Node the pass read: its version and record are where the first write starts. */
  node: NodeObject;
  signal: AbortSignal;
}): PersistRecord {
  let version = o.node.metadata?.resourceVersion;
  let last: string | null = o.node.metadata?.annotations?.[STATE_ANNOTATION] ?? null;
  return async (value, labels, change) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const guard = version ? { resourceVersion: version } : undefined;
        // the signal is shutdown: a write under way still gets its retries, new ones stop at once
        version = await retryTransient(
          () => o.cluster.setNodeAnnotation(o.nodeName, STATE_ANNOTATION, value, labels, change, guard),
          { signal: o.signal },
        );
        last = value;
        return;
      } catch (err) {
        if (!isConflictError(err) || attempt >= ATTEMPTS) throw err;
        const node = await o.cluster.getNode(o.nodeName);
        const there = node?.metadata?.annotations?.[STATE_ANNOTATION] ?? null;
        // a write whose answer was lost, then retried: it landed
        if (node && there === value) {
          version = node.metadata?.resourceVersion;
          last = value;
          return;
        }
        // someone else's record: this writer keeps its old version, so every later write fails too
        if (!node || there !== last)
          throw new RecordConflictError(
            `the record of node ${o.nodeName} was written by someone else since it was read; reading it again`,
            { cause: err },
          );
        version = node.metadata?.resourceVersion;
      }
    }
  };
}

/**
 * A one-shot command's write of the record lost to someone else's (the node's agent taking it over
 * while `restore --force` ran, an evacuation begun meanwhile, another run): it does not read again
 * as the agent does; it stops there and says where to look.
 */
export const stoppedByWriter =
  (node: string, command: 'run-once' | 'restore') =>
  (err: unknown): never => {
    if (!(err instanceof RecordConflictError)) throw err;
    throw new RecordConflictError(
      `node ${node}: its record was written by someone else while this ${command} ran (its agent, or another run): ` +
        `${command} stopped there; \`drainer status --node ${node}\` shows where the node stands`,
      { cause: err },
    );
  };
