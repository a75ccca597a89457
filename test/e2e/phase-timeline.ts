// The phases of the Node records over time, as one watch of the API server sees them: which nodes
// were Evacuating at once, and in which order they began.
import { runWatch } from '../../src/kube/watch.ts';
import { parseRecord, STATE_ANNOTATION, type Phase } from '../../src/core/record/record.ts';
import type { KubeNode } from '../../src/kube/types.ts';
import type { Stack } from './stack.ts';

export type Step = { node: string; phase: Phase | 'InService'; labelled: boolean };

/** Every change of a Node record's phase or of the queue label, in the API server's order (one watch). */
export function phaseTimeline(stack: Stack, signal: AbortSignal): Step[] {
  const seen = new Map<string, string>();
  const timeline: Step[] = [];
  void runWatch<KubeNode>({
    k: stack.k,
    path: '/api/v1/nodes',
    signal,
    log: stack.log,
    timeoutSeconds: 30,
    onEvent: (_type, n) => {
      const phase = parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.phase ?? 'InService';
      const node = n.metadata.name ?? '';
      const labelled = n.metadata.labels?.['drainer.dev/queued'] !== undefined;
      if (seen.get(node) === `${phase} ${labelled}`) return;
      seen.set(node, `${phase} ${labelled}`);
      const last = timeline.findLast((t) => t.node === node);
      if (last?.phase === phase && last.labelled === labelled) return;
      timeline.push({ node, phase, labelled });
    },
  });
  return timeline;
}

/** The most nodes in Evacuating at any point of the timeline. */
export function maxEvacuating(timeline: readonly { node: string; phase: string }[]): number {
  const now = new Set<string>();
  let max = 0;
  for (const t of timeline) {
    if (t.phase === 'Evacuating') now.add(t.node);
    else now.delete(t.node);
    max = Math.max(max, now.size);
  }
  return max;
}
