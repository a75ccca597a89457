// Which Node events are worth a reconcile. The kubelet posts its Node's status every 5 minutes
// (nodeStatusReportFrequency; node-problem-detector adds its conditions): on a real cluster most
// events of an agent's own Node change nothing the reconciler reads, which is its spec, labels,
// annotations, finalizers and deletion (never its status: the core's NodeObject has none).
import { isDeepStrictEqual } from 'node:util';
import type { NodeObject } from '../cluster/objects.ts';

/** The Node without what a status write changes: status, resourceVersion and managedFields. */
function readPart(node: NodeObject): unknown {
  const { status: _status, metadata, ...rest } = node as NodeObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = (metadata ?? {}) as Record<string, unknown>;
  return { ...rest, metadata: meta };
}

/** True when `next` differs from `prev` in more than its status (a new or deleted Node always does). */
export function changesWhatIsRead(prev: NodeObject | undefined, next: NodeObject | undefined): boolean {
  if (!prev || !next) return prev !== next;
  return !isDeepStrictEqual(readPart(prev), readPart(next));
}
