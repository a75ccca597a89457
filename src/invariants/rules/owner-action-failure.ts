// No owner's action is reported as drainer's failure: a server its owner stopped, shelved, deleted,
// resized or moved during an evacuation is the owner's doing, never a MigrationFailed (or any
// Warning "…Failed" Event naming it) of that evacuation. Needs the owners' actions (an
// observation) and the Events' creation times.
import { nodeOfHost } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

/** Actions after which the server's state is its owner's doing. A policy change is not one. */
const OWNERS = new Set(['stop', 'start', 'shelve', 'unshelve', 'delete', 'resize', 'notify-move']);
/** Event times are whole seconds (rfc3339): an Event up to a second before the action may be after it. */
const STAMP_MS = 1000;

export function ownerActionReportedAsFailure(world: World, opts: CheckOptions): Violation[] {
  const actions = world.observations?.ownerActions;
  if (!actions) return [];
  const out: Violation[] = [];
  for (const e of world.events) {
    if (e.type !== 'Warning' || !e.reason.endsWith('Failed') || e.at === undefined) continue;
    const a = actions.find(
      (x) =>
        OWNERS.has(x.action) &&
        e.message.includes(x.serverId) &&
        x.host !== undefined &&
        nodeOfHost(world, x.host, opts) === e.name &&
        e.at !== undefined &&
        e.at + STAMP_MS >= x.at &&
        e.at <= (x.until ?? Infinity),
    );
    if (!a) continue;
    out.push(
      violation(
        'owner-action-reported-as-failure',
        `node/${e.name}`,
        `Event ${e.reason} "${e.message}" at ${new Date(e.at).toISOString()}, but its owner did ${a.action} to server ${a.name} at ${new Date(a.at).toISOString()} in this maintenance`,
        `what the owner did is not drainer's failure: report the server as the owner's (moved, shelved, deleted or stopped by its owner)`,
      ),
    );
  }
  return out;
}
