// What stopping a VMI on purpose shares, whichever way it is stopped (maintenance: stop, or
// nonMigratable: shutdown): the waiting deps, when a VMI counts as stopped here, and its progress.
import type { WorkloadProgress } from '../../core/backends/plugin.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Classified } from './classify.ts';
import type { KubevirtApi } from './port.ts';
import type { Vmi } from './types.ts';

export interface StopDeps {
  readonly api: KubevirtApi;
  readonly node: string;
  readonly log: Logger;
  readonly now: () => number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly pollMs: number;
  readonly timeoutMs: number;
}

/** Gone, finished, or running on another node: no longer on this one. */
export const stoppedHere = (vmi: Vmi | undefined, node: string): boolean =>
  !vmi ||
  vmi.status?.phase === 'Succeeded' ||
  vmi.status?.phase === 'Failed' ||
  (!!vmi.status?.nodeName && vmi.status.nodeName !== node);

/** The progress of each VMI stopped since `started`: failed if still `left`, else skipped. */
export function stopProgress(
  vmis: readonly Classified[],
  left: ReadonlySet<string>,
  started: number,
  deps: Pick<StopDeps, 'node' | 'now'>,
  message: { readonly failed: (c: Classified) => string; readonly stopped: (c: Classified) => string },
): WorkloadProgress[] {
  return vmis.map((c) => ({
    id: c.vmi.metadata.uid ?? c.key,
    name: c.key,
    action: c.action,
    source: deps.node,
    attempts: 0,
    startedAt: new Date(started).toISOString(),
    durationMs: Math.max(0, deps.now() - started),
    ...(left.has(c.key)
      ? { state: 'failed' as const, message: message.failed(c) }
      : // stopped: its VMI is no longer on the node (a stopped VirtualMachine has none, on-host.ts)
        { state: 'skipped' as const, message: message.stopped(c), presence: 'gone' as const }),
  }));
}
