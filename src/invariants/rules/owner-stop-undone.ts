// No server that its owner stopped is started by drainer: a restore starts only what drainer
// stopped. Needs the servers' power changes with who caused each (an observation); says nothing
// without them.
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export function ownerStopUndone(world: World, _opts: CheckOptions): Violation[] {
  const changes = world.observations?.powerChanges ?? [];
  const out: Violation[] = [];
  for (const [i, c] of changes.entries()) {
    if (c.to !== 'running' || c.by !== 'drainer') continue;
    const before = changes.slice(0, i).findLast((x) => x.serverId === c.serverId);
    if (before?.to !== 'stopped' || before.by !== 'owner') continue;
    out.push(
      violation(
        'owner-stop-undone',
        `server/${c.serverId}`,
        `server ${c.name} was stopped by its owner at ${new Date(before.at).toISOString()}${before.host ? ` on ${before.host}` : ''} and started again by drainer at ${new Date(c.at).toISOString()}`,
        `the owner's stop is theirs: drainer must start only what it stopped itself (its record's stopped entries); stop the server again if its owner wants it so`,
      ),
    );
  }
  return out;
}
