// Restore confirms the resizes drainer asked for and no run of the migrator saw land: a cold
// migration an uncordon left still moving (the cancel follows it for nova.migrationTimeout), or one
// that landed while no agent ran. Each server the record cold-migrated is read once: waiting in
// VERIFY_RESIZE after drainer's own call (whose.ts), it is confirmed; still moving, the log says so.
import { isAuthError, isNotFoundError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ComputeClient } from './compute.ts';
import type { MigrationRecord } from './migrator-options.ts';
import { taskStateOf } from './types.ts';
import { whoseMove } from './whose.ts';

type Compute = Pick<
  ComputeClient,
  'getServer' | 'confirmResize' | 'listMigrationsOf' | 'listInstanceActions' | 'userId'
>;

export async function confirmLeft(
  compute: Compute,
  migrations: Readonly<Record<string, MigrationRecord>>,
  ctx: { log: Logger; signal: AbortSignal; dryRun?: boolean },
): Promise<void> {
  const { log, signal } = ctx;
  for (const [id, r] of Object.entries(migrations)) {
    if (r.move !== 'cold-migrate' || r.stopped) continue;
    try {
      const s = await compute.getServer(id, signal);
      const at = Date.parse(r.startedAt);
      const own = {
        requests: new Set<string>(),
        lost: Number.isNaN(at) ? undefined : { action: 'cold-migrate' as const, at },
      };
      const landed = s.status === 'VERIFY_RESIZE' && taskStateOf(s) === null;
      if (!landed && taskStateOf(s) === null) continue; // confirmed, reverted, or never moved
      if ((await whoseMove({ compute, signal, log }, id, 'cold-migrate', own)) !== 'ours') continue;
      if (!landed) {
        log.warn(
          { server: id, task: taskStateOf(s) },
          `drainer's cold migration still runs: confirm its resize once it lands (openstack server resize confirm ${id})`,
        );
        continue;
      }
      if (ctx.dryRun) {
        log.info({ server: id }, "dry run: would confirm the resize of drainer's cold migration");
        continue;
      }
      await compute.confirmResize(id, signal);
      log.info(
        { server: id },
        "resize confirmed (drainer's cold migration, landed after its evacuation ended)",
      );
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      // deleted, or confirmed by someone first (400): nothing left to confirm; else said, for the operator
      if (!isNotFoundError(err)) log.warn({ err, server: id }, "confirming drainer's resize failed");
    }
  }
}
