// notify (drainer.dev/maintenance: notify): the VMI's owner is asked to move it within
// kubevirt.notifyTimeout; until then drainer only reports that it waits, then it moves it itself.
import type { WorkloadProgress } from '../../core/backends/plugin.ts';
import type { Classified } from './classify.ts';
import type { RecordKeeper } from './keeper.ts';
import { MAINTENANCE_ANNOTATION } from './policy.ts';
import { staticProgress } from './report.ts';
import type { Tracker } from './tracker.ts';

/** VMIs whose owner is asked to move them, each until when. */
export interface Asking {
  readonly until: (key: string) => number;
  readonly vmis: ReadonlySet<string>;
}

/**
 * The owners' clock lives in the record, so a restarted agent or a retried evacuation gives each
 * owner what is left of kubevirt.notifyTimeout, not the whole of it again.
 */
export async function ask(
  notifies: readonly Classified[],
  record: RecordKeeper,
  now: number,
  notifyTimeoutSeconds: number,
): Promise<Asking> {
  const asked = record.current.asked ?? {};
  const fresh = notifies.filter((c) => asked[c.key] === undefined);
  const since = { ...asked, ...Object.fromEntries(fresh.map((c) => [c.key, now])) };
  if (fresh.length) await record.save({ ...record.current, asked: since }); // before the first ask
  const timeoutMs = notifyTimeoutSeconds * 1000;
  return { until: (key) => (since[key] ?? now) + timeoutMs, vmis: new Set(notifies.map((c) => c.key)) };
}

/** Every VMI's progress; one whose owner still has time shows the wait for its owner. */
export function progressOf(
  classified: readonly Classified[],
  tracker: Tracker,
  asking: Asking,
  now: () => number,
): WorkloadProgress[] {
  return classified.map((c) => {
    if (c.klass === 'migrate' || c.klass === 'external') return tracker.progress(c);
    if (c.klass !== 'notify') return staticProgress(c);
    const p = tracker.progress(c);
    // notify: waiting for its owner is the core's MoveRequested Event and awaiting-owner metric
    const left = asking.until(c.key) - now();
    if (p.state !== 'pending' || !asking.vmis.has(c.key) || left <= 0 || p.message?.startsWith('queued'))
      return { ...p, action: 'live-migrate' };
    return {
      ...p,
      action: 'notify',
      message:
        `its owner is asked to move it (${MAINTENANCE_ANNOTATION}=notify); drainer has it ` +
        `live-migrated in ${Math.ceil(left / 1000)}s (kubevirt.notifyTimeout)`,
    };
  });
}
