// No server is left in VERIFY_RESIZE by drainer's move: a cold migration drainer asked for ends with
// its confirm (Nova keeps the server there until someone confirms or reverts, and with the default
// resize_confirm_window of 0, for good). Whose move it is: where Nova's accepted actions were observed
// (the sandbox), the last migrate or resize of the server; otherwise its last migration was a plain
// cold migration (an owner resizes; drainer migrates) off a host drainer disabled.
import { isDisabledByDrainer } from '../../core/restore/stranded.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldServer } from '../world.ts';

const ASKS = new Set(['migrate', 'resize']);

/** Is the move that left the server waiting drainer's? undefined: not known. */
function drainersMove(world: World, s: WorldServer, opts: CheckOptions): boolean | undefined {
  const nova = world.nova;
  if (!nova) return undefined;
  if (nova.moveActions) {
    const last = nova.moveActions.filter((a) => a.serverId === s.id && ASKS.has(a.action)).at(-1);
    return last ? last.byDrainer : undefined;
  }
  const m = nova.migrations.filter((x) => x.serverId === s.id && x.type !== 'live-migration').at(-1);
  if (!m || m.type !== 'migration') return m ? false : undefined;
  const source = nova.services.find((x) => x.host === m.source);
  return source ? isDisabledByDrainer(source, opts.disabledReasonPrefix) : undefined;
}

export function serversLeftInVerifyResize(world: World, opts: CheckOptions): Violation[] {
  return (world.nova?.servers ?? [])
    .filter((s) => s.status === 'VERIFY_RESIZE' && drainersMove(world, s, opts) === true)
    .map((s) =>
      violation(
        'server-left-in-verify-resize',
        `server/${s.name}`,
        `${s.name} (${s.id}) waits in VERIFY_RESIZE on ${s.host ?? '?'} after drainer's cold migration: nobody confirmed it`,
        `confirm it: \`openstack server migration confirm ${s.id}\` (it runs on ${s.host ?? 'its new host'} already); the agent's log says why drainer did not`,
      ),
    );
}
