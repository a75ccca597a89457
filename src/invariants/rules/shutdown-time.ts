// drainer doctor's shutdown check (issue 49 item 3): a node whose host's logind would not wait long
// enough for its evacuation. The agent publishes logind's cap on its Node (LOGIND_DELAY_ANNOTATION); the
// servers on the host and their memory come from Nova. An operator finding: nothing broke yet, a setting
// would leave VMs to their fallback (Nova: stopped) on an unplanned reboot.
import { shutdownCheck } from '../../core/shutdown/check.ts';
import { LOGIND_DELAY_ANNOTATION } from '../../core/shutdown/mark.ts';
import { hostOfNode } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

/** Servers a shutdown's evacuation live-migrates (one stopped loses nothing in a reboot). */
const RUNNING = new Set(['ACTIVE', 'PAUSED', 'MIGRATING']);

export function shutdownTimeShort(world: World, opts: CheckOptions): Violation[] {
  const s = opts.shutdown;
  if (!s || !world.nova) return [];
  return world.nodes.flatMap((node) => {
    const cap = Number(node.annotations[LOGIND_DELAY_ANNOTATION]);
    const host = hostOfNode(world, node.name, opts);
    if (!Number.isFinite(cap) || !node.annotations[LOGIND_DELAY_ANNOTATION] || !host) return [];
    const running = (world.nova?.servers ?? []).filter((v) => v.host === host && RUNNING.has(v.status));
    const r = shutdownCheck({
      delayMaxMs: cap * 1000,
      vms: running.map((v) => (v.memoryMb !== undefined ? { memoryBytes: v.memoryMb * 1024 ** 2 } : {})),
      ...s,
    });
    if (!r.short || !r.fix) return [];
    const evidence = r.line.slice(0, -`; ${r.fix}`.length);
    return [violation('shutdown-time-short', `node/${node.name}`, evidence, r.fix)];
  });
}
