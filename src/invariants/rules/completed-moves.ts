// No failure reported for a move that Nova completed (issue 48): a MigrationFailed for a server whose
// migration off the node's host already existed when drainer reported it, and which Nova then
// finished (completed, confirmed, or landed in VERIFY_RESIZE). A cold migration past
// nova.migrationTimeout, an uncordon's cancel of one, a 409 taken for someone else's move: drainer
// gave up, Nova did not. Judged by the migration record, wherever the server went since (a later move
// back hides it from migration-failed-but-moved, which judges where the server is now); that rule
// names a server still off the host, this one the rest. Needs the migrations' creation times.
// A record that says completed while the server stayed on its source moved nothing (design.md: trust
// the server's host), and drainer's failure for it is right: a move counts only if the server was
// elsewhere after it (the next move starts from its destination, or, the last, Nova shows it off).
import { hostOfNode, movesOf } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldEvent, WorldMigration } from '../world.ts';
import { movedOff, serverIdOf } from './migrations.ts';

const novaEvents = (world: World, reason: string): WorldEvent[] =>
  world.events.filter((e) => e.kind === 'Node' && e.reason === reason && e.message.startsWith('nova: '));

/** The server's moves that really took it off their source (where it was next is not the source). */
function realMoves(world: World, serverId: string): WorldMigration[] {
  const moves = movesOf(world, serverId);
  const now = world.nova?.servers.find((s) => s.id === serverId)?.host;
  return moves.filter((m, i) => (i + 1 < moves.length ? moves[i + 1]?.source : now) !== m.source);
}

export function failuresOfCompletedMoves(world: World, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  const succeeded = novaEvents(world, 'MigrationSucceeded');
  for (const e of novaEvents(world, 'MigrationFailed')) {
    const id = serverIdOf(e);
    const host = hostOfNode(world, e.name, opts);
    if (!id || !host || e.at === undefined) continue;
    const at = e.at;
    // drainer said so afterwards: the report was corrected
    if (succeeded.some((s) => s.name === e.name && serverIdOf(s) === id && (s.at ?? 0) >= at)) continue;
    if (movedOff(world, id, host)) continue; // migration-failed-but-moved names it
    // the attempt the failure is about: the newest migration off the host begun before it (whatever
    // its status). An earlier move that Nova completed, the server back on the host since, is history
    const m = (world.nova?.migrations ?? [])
      .filter((x) => x.serverId === id && x.source === host && x.createdAt !== undefined && x.createdAt <= at)
      .sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0))
      .at(-1);
    if (!m || !realMoves(world, id).includes(m)) continue;
    const server = world.nova?.servers.find((s) => s.id === id);
    out.push(
      violation(
        'failure-for-completed-move',
        `node/${e.name}`,
        `Event MigrationFailed "${e.message}" at ${new Date(at).toISOString()}, but Nova's ${m.type ?? 'migration'} ${m.id} of ${server?.name ?? id} (${host}→${m.dest ?? '?'}, begun ${new Date(m.createdAt ?? 0).toISOString()}) ended ${m.status}`,
        `the move was not drainer's failure: follow a migration until Nova ends it; look at \`openstack server migration list --server ${id}\``,
      ),
    );
  }
  return out;
}
