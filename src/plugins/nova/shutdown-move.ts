// A server found `migrating` at a host shutdown's deadline (issue 49; shutdown-stop.ts): is its live
// migration one to leave to finish, or one that would never start before the host goes down? Nova lists a
// live migration under /servers/{id}/migrations only from `queued` on; before that it is `accepted` (the
// conductor still schedules it, about a second), and can be neither aborted (2.65 aborts `queued`,
// `preparing` and `running`) nor stopped (os-stop is 409 while the task is `migrating`). So an accepted
// one is read again until it leaves `accepted`, within a bound the margin sets: queued, it is taken out
// of the queue (the server is then stopped); preparing or running, it is left to finish.
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import { hostOf, taskStateOf, type NovaServer } from './types.ts';

/** How often the server and its migrations are read while Nova moves them on. */
const READ_MS = 200;

export interface MoveWait {
  readonly signal: AbortSignal;
  readonly now: () => number;
  readonly sleep: Sleep;
  /** Until when an accepted migration is waited for (then the server is left, named). */
  readonly acceptedBy: number;
  /** Until when Nova may take to clear the task of a migration taken out of its queue. */
  readonly clearedBy: number;
}

/** What to do with the server: leave its move to finish, stop it (as it now is), or leave it, and why. */
export type MoveVerdict =
  | { readonly then: 'finish'; readonly said: string }
  | { readonly then: 'stop'; readonly server: NovaServer; readonly said: string }
  | { readonly then: 'leave'; readonly why: string };

export async function settleMove(
  compute: ComputeClient,
  id: string,
  host: string,
  w: MoveWait,
): Promise<MoveVerdict> {
  // before 2.65 a queued migration cannot leave the queue: whatever it becomes, it is Nova's
  if (!compute.atLeast(65)) return { then: 'finish', said: 'its live migration left to finish' };
  let accepted = false;
  const was = () => (accepted ? 'accepted, then ' : '');
  for (;;) {
    const open = await compute.listServerMigrations(id, w.signal);
    const queued = open.find((m) => m.status === 'queued');
    if (queued) return unqueue(compute, id, queued.id, w, `its live migration ${was()}queued`);
    const under = open[0];
    if (under) return { then: 'finish', said: `its live migration ${was()}${under.status}: left to finish` };
    const s = await compute.getServer(id, w.signal);
    // its move ended meanwhile: not scheduled (back to ACTIVE here), or landed elsewhere
    if (taskStateOf(s) !== 'migrating') {
      const at = hostOf(s);
      if (at && at !== host) return { then: 'finish', said: `its live migration landed on ${at}` };
      return { then: 'stop', server: s, said: `its live migration ${was()}ended here` };
    }
    accepted = true;
    if (w.now() + READ_MS > w.acceptedBy)
      return {
        then: 'leave',
        why: 'its live migration still accepted by Nova (neither queued nor running) at the margin: not stopped',
      };
    await w.sleep(READ_MS, w.signal);
  }
}

/** Takes the queued migration out of Nova's queue (2.65+) and waits until Nova has cleared its task. */
async function unqueue(
  compute: ComputeClient,
  id: string,
  mid: number,
  w: MoveWait,
  said: string,
): Promise<MoveVerdict> {
  await compute.abortMigration(id, mid, w.signal);
  for (;;) {
    const s = await compute.getServer(id, w.signal);
    if (taskStateOf(s) === null) return { then: 'stop', server: s, said: `${said}: taken out of the queue` };
    if (w.now() + READ_MS > w.clearedBy)
      return {
        then: 'leave',
        why: `${said}, taken out of the queue; Nova had not cleared its task at the margin: not stopped`,
      };
    await w.sleep(READ_MS, w.signal);
  }
}
