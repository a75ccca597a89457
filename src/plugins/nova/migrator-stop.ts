// Way out stop: a server that may not move is stopped on the host for a maintenance declared a
// reboot, and restore starts it again.
import {
  isAuthError,
  isConflictError,
  isForbiddenError,
  isNotFoundError,
  isOutcomeUnknownError,
} from '../../errors.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';

/**
 * Recorded before the call, so restore starts it again whatever happens next (an agent that dies
 * before the answer included). Refused, the call did nothing: the mark goes, so a server its owner
 * stopped first (Nova's 409 while it powers off) is never started by restore.
 */
export async function stopOnHost(o: MigratorOptions, e: Entry): Promise<void> {
  const { compute, signal, log } = o;
  const now = o.now();
  e.stopped = true;
  e.next = undefined;
  // an earlier stop's request id goes: until this one's is known, restore goes by where it is
  await o.remember(e.id, { stopped: true, stopRequest: undefined });
  let request: string | undefined;
  try {
    request = await compute.stopServer(e.id, signal);
  } catch (err) {
    if (signal.aborted || isAuthError(err) || isForbiddenError(err)) throw err;
    if (isOutcomeUnknownError(err)) return; // maybe taken: the mark stays, the next poll looks
    e.stopped = false;
    await o.remember(e.id, { stopped: undefined });
    if (isNotFoundError(err)) e.finish('skipped', now, 'deleted during the evacuation');
    // 409: busy, its owner's stop (or another task) first; the next poll looks again
    else if (isConflictError(err))
      log.info(
        { server: e.id, name: e.name },
        'os-stop refused (409): the server is busy, maybe stopped by its owner',
      );
    else e.finish('failed', now, `Nova refused os-stop: ${(err as Error).message}`);
    return;
  }
  // restore starts it while this stop is the newest power action in its log, wherever it is
  if (request) await o.remember(e.id, { stopRequest: request });
  e.action = 'stop';
  e.message = 'stopping on the host (the maintenance is declared a reboot)';
  log.info({ server: e.id, name: e.name }, 'server stopped on the host (way out stop, declared reboot)');
}
