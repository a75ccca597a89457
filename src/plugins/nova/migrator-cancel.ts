// The end of an evacuation that did not finish: a cancel (uncordon) takes back what it can; a
// shutdown leaves every submitted migration to Nova, where the next agent adopts it from the record
// (aborting would make it submit them again).
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import type { Tracker } from './track.ts';

export function leave(entries: readonly Entry[]): void {
  for (const e of entries)
    if (e.state === 'migrating') e.message = 'shut down: left to Nova, the next agent follows it';
}

export async function cancel(o: MigratorOptions, tracker: Tracker, entries: readonly Entry[]): Promise<void> {
  const moving = entries.filter((e) => e.state === 'migrating');
  for (const e of moving) {
    // Submitted ahead and not started: nothing to lose, so it is aborted whatever abortOnCancel
    // says (Nova aborts queued live migrations from 2.65; below, none were submitted ahead).
    const queued = e.deadlineFrom === undefined && o.compute.atLeast(65);
    if (e.abort) {
      const note = `cancelled after its deadline (${e.abort.note})`;
      if ((await tracker.afterCancel(e, note)) === 'stayed') e.finish('failed', o.now(), note);
    } else if (o.abortOnCancel || queued) {
      const { sent, note } = await tracker.abort(e);
      if (sent && e.migrationId !== undefined) await tracker.abortSettled(e, e.migrationId);
      const after = await tracker.afterCancel(e, `the cancel came too late: ${note}`);
      // still being scheduled, nothing to abort yet: not a failure, Nova moves it on its own
      if (after === 'moving')
        e.message = `cancelled (${note}): Nova goes on with it, left to finish on its own`;
      else if (after === 'stayed') e.finish('failed', o.now(), `cancelled (${note})`);
    } else {
      e.message = 'cancelled: left to finish on its own';
    }
  }
  for (const e of entries) if (e.state === 'pending') e.message = 'cancelled before it started';
}
