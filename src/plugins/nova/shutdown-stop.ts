// The Nova fallback at a host shutdown's deadline (issue 49): logind's time is up and servers are
// still on the host. Each one running idle gets os-stop, marked first as drainer's (mark-stops.ts),
// so Nova knows it is stopped rather than crashed, and the restore after boot starts it (marked.ts).
// The stops are only asked for: Nova's 202 records them, and the lock is given back right after.
import type { NodeRef, ShutdownFallback, ShutdownFallbackContext } from '../../core/backends/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import { resolveServiceHost } from './mapping.ts';
import { markingStops } from './mark-stops.ts';
import { settleMove } from './shutdown-move.ts';
import { taskStateOf } from './types.ts';

export async function stopForShutdown(
  compute: ComputeClient,
  nova: NovaConfig,
  node: NodeRef,
  ctx: ShutdownFallbackContext,
  clock: { readonly now: () => number; readonly sleep: Sleep },
): Promise<ShutdownFallback> {
  const { signal, log } = ctx;
  // an accepted migration is waited for through half the margin, and an unqueued one's task until
  // three quarters: what is left is for the mark and the stop
  const t0 = clock.now();
  const wait = {
    signal,
    ...clock,
    acceptedBy: t0 + ctx.marginMs / 2,
    clearedBy: t0 + (ctx.marginMs * 3) / 4,
  };
  await compute.init(signal);
  const { host } = await resolveServiceHost(compute, node.name, nova.hostMapping, signal);
  const servers = await compute.listServersOnHost(host, signal);
  const marking = markingStops(compute, { node: node.name, trigger: ctx.trigger }, log);
  const stopped: string[] = [];
  const migrating: string[] = [];
  const left: { id: string; why: string }[] = [];
  const said = (id: string, did: string) => log.info({ server: id }, `shutdown fallback: ${id}: ${did}`);
  const leave = (id: string, why: string) => (left.push({ id, why }), said(id, `left as it is: ${why}`));
  // side by side: the time left is the margin before logind's deadline
  await Promise.all(
    servers.map(async (found) => {
      let s = found;
      let moved = '';
      // A live migration under way is left to finish: Nova refuses os-stop during it (409), and an
      // abort would need the source's libvirt and keep the guest on the host that goes down. Done
      // before libvirt stops, the guest runs on; cut short, Nova fails it and the guest stays here.
      // One still queued (drainer submits ahead) would never start: it leaves the queue, then stops.
      try {
        if (taskStateOf(s) === 'migrating') {
          const v = await settleMove(compute, s.id, host, wait);
          if (v.then === 'finish') return void (migrating.push(s.id), said(s.id, v.said));
          if (v.then === 'leave') return leave(s.id, v.why);
          [s, moved] = [v.server, `${v.said}; `];
        }
        const task = taskStateOf(s);
        if (s.status !== 'ACTIVE' || task !== null)
          return leave(s.id, `${moved}${task ? `busy: task_state ${task}` : s.status}`);
        await marking.compute.stopServer(s.id, signal);
        stopped.push(s.id);
        said(s.id, `${moved}stopped (marked: started again after boot)`);
      } catch (err) {
        leave(s.id, `${moved}not stopped: ${(err as Error).message}`);
      }
    }),
  );
  return { stopped, migrating, left };
}
