// The per-VM fallback at a host shutdown's deadline (issue 49): logind's time is up with VMs still on
// the host. Each plugin with a fallback does it, side by side (Nova: os-stop, marked, so the restore
// after boot starts the server); a plugin without one leaves its VMs to their own policy. Answers the
// one line that says what became of them; a plugin's failure is named in it, never thrown: the lock
// goes back whatever happens here.
import type { BackendPlugin, NodeRef, ShutdownFallback } from '../backends/plugin.ts';
import type { Logger } from '../../observability/logger.ts';
import { SHUTDOWN_TRIGGER } from './mark.ts';

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function said(r: ShutdownFallback): string {
  const parts = [
    r.stopped.length ? `${r.stopped.length} stopped (marked: started again after boot)` : '',
    r.migrating.length ? `${count(r.migrating.length, 'migration')} left to finish` : '',
    r.left.length
      ? `${r.left.length} left as ${r.left.length === 1 ? 'it is' : 'they are'} (${r.left
          .map((l) => `${l.id}: ${l.why}`)
          .join(', ')})`
      : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'nothing left to stop';
}

export async function fallBack(
  plugins: readonly BackendPlugin[],
  node: NodeRef,
  ctx: { readonly log: Logger; readonly signal: AbortSignal; readonly marginMs: number },
): Promise<string> {
  const lines = await Promise.all(
    plugins.map(async (p) => {
      if (!p.atShutdown)
        return `${p.name}: its VMs are left to their own policy (KubeVirt: each VM's run strategy)`;
      try {
        return `${p.name}: ${said(await p.atShutdown(node, { ...ctx, trigger: SHUTDOWN_TRIGGER }))}`;
      } catch (err) {
        return `${p.name}: fallback failed: ${err instanceof Error ? err.message : String(err)}`;
      }
    }),
  );
  return lines.join('; ');
}
