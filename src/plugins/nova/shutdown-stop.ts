// The Nova fallback at a host shutdown's deadline (issue 49): logind's time is up and servers are
// still on the host. Each one running idle gets os-stop, marked first as drainer's (mark-stops.ts),
// so Nova knows it is stopped rather than crashed, and the restore after boot starts it (marked.ts).
// The stops are only asked for: Nova's 202 records them, and the lock is given back right after.
import type { NodeRef, ShutdownFallback, ShutdownFallbackContext } from '../../core/backends/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { ComputeClient } from './compute.ts';
import { resolveServiceHost } from './mapping.ts';
import { markingStops } from './mark-stops.ts';
import { taskStateOf } from './types.ts';

export async function stopForShutdown(
  compute: ComputeClient,
  nova: NovaConfig,
  node: NodeRef,
  ctx: ShutdownFallbackContext,
): Promise<ShutdownFallback> {
  const { signal, log } = ctx;
  await compute.init(signal);
  const { host } = await resolveServiceHost(compute, node.name, nova.hostMapping, signal);
  const servers = await compute.listServersOnHost(host, signal);
  const marking = markingStops(compute, { node: node.name, trigger: ctx.trigger }, log);
  const stopped: string[] = [];
  const migrating: string[] = [];
  const left: { id: string; why: string }[] = [];
  // side by side: the time left is the margin before logind's deadline
  await Promise.all(
    servers.map(async (s) => {
      const task = taskStateOf(s);
      // A live migration under way is left to finish: Nova refuses os-stop during it (409), and an
      // abort would need the source's libvirt and keep the guest on the host that goes down. Done
      // before libvirt stops, the guest runs on; cut short, Nova fails it and the guest stays here.
      // One still queued (drainer submits ahead) would never start: it leaves the queue, then stops.
      try {
        if (task === 'migrating' && !(await unqueued(compute, s.id, signal)))
          return void migrating.push(s.id);
        if (task !== 'migrating' && (s.status !== 'ACTIVE' || task !== null))
          return void left.push({ id: s.id, why: task ? `busy: task_state ${task}` : s.status });
        await marking.compute.stopServer(s.id, signal);
        stopped.push(s.id);
      } catch (err) {
        left.push({ id: s.id, why: `not stopped: ${(err as Error).message}` });
      }
    }),
  );
  return { stopped, migrating, left };
}

/** How often a server taken out of the queue is read until Nova has cleared its task. */
const READ_MS = 100;

/**
 * Takes the server's queued live migration out of Nova's queue (2.65+) and waits until Nova has
 * cleared its task; false when its migration runs (or Nova is older): that one is left to finish.
 */
async function unqueued(compute: ComputeClient, id: string, signal: AbortSignal): Promise<boolean> {
  if (!compute.atLeast(65)) return false;
  const queued = (await compute.listServerMigrations(id, signal)).find((m) => m.status === 'queued');
  if (!queued) return false;
  await compute.abortMigration(id, queued.id, signal);
  while (taskStateOf(await compute.getServer(id, signal)) !== null)
    await new Promise((r) => setTimeout(r, READ_MS));
  return true;
}
