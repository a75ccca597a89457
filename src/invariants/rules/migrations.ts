// What drainer says moved agrees with Nova: every MigrationSucceeded names a server Nova moved off
// the node's host (a migration record that ended, and the server's host now elsewhere); the moved
// counts are no larger than what Nova moved; no MigrationFailed for a server Nova did move.
import { hostOfNode, MOVED_STATUSES, movesOf, recordOf } from '../hosts.ts';

/** Migration statuses that moved nothing. */
const GAVE_UP = new Set(['error', 'failed', 'cancelled', 'aborted']);
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, ObservedOwnerAction, World, WorldEvent } from '../world.ts';

/** "nova: web-1 (<id>): moved to …" → the id. */
const SERVER_ID = /^nova: .* \(([^()\s]+)\): /;

export const serverIdOf = (e: WorldEvent): string | undefined => SERVER_ID.exec(e.message)?.[1];

/** Did the server's owner do this (the owners' actions, where they were observed)? */
const ownerDid = (world: World, serverId: string, what: (a: ObservedOwnerAction) => boolean): boolean =>
  (world.observations?.ownerActions ?? []).some((a) => a.serverId === serverId && what(a));

/** Did Nova move the server off host (a finished migration), and where is it now: off, or back by a later one? */
function moveOff(world: World, serverId: string, host: string): 'never' | 'off' | 'back' | 'unexplained' {
  const moves = movesOf(world, serverId);
  const lastOff = moves.findLastIndex((m) => m.source === host);
  if (lastOff < 0) return 'never';
  const offAt = moves[lastOff]?.updatedAt ?? 0;
  // Nova shows the server on its new host before the migration's record leaves running
  // (post-migration): a later migration onto the host that has not failed explains it too
  const back =
    moves.slice(lastOff + 1).some((m) => m.dest === host) ||
    (world.nova?.migrations ?? []).some(
      (m) =>
        m.serverId === serverId &&
        m.dest === host &&
        !GAVE_UP.has(m.status) &&
        !MOVED_STATUSES.has(m.status) &&
        (m.updatedAt ?? 0) >= offAt,
    );
  const now = world.nova?.servers.find((s) => s.id === serverId)?.host;
  if (now !== host) return 'off';
  // an owner's unshelve since lands it wherever Nova's scheduler chose, this host too
  if (ownerDid(world, serverId, (a) => a.action === 'unshelve' && a.at >= offAt)) return 'back';
  // on the host again: only a later migration onto it explains that
  return back ? 'back' : 'unexplained';
}

/** Off the host now, by a finished migration. */
export const movedOff = (world: World, serverId: string, host: string): boolean =>
  moveOff(world, serverId, host) === 'off';

/** Its last move off the host was a resize: its owner's doing (drainer live- or cold-migrates, never resizes). */
const resizedOff = (world: World, serverId: string, host: string): boolean =>
  movesOf(world, serverId).findLast((m) => m.source === host)?.type === 'resize';

/** Its last move off the host was begun after `at` (both known). */
const laterAttempt = (world: World, serverId: string, host: string, at: number | undefined): boolean => {
  const created = movesOf(world, serverId).findLast((m) => m.source === host)?.createdAt;
  return at !== undefined && created !== undefined && created > at;
};

/** Moved off the host by Nova at some point (off now, or brought back since by a later migration). */
const everMovedOff = (world: World, serverId: string, host: string): boolean =>
  ['off', 'back'].includes(moveOff(world, serverId, host));

/** "12 live-migration node-a→node-b completed, …" (every status), or "none". */
const migrationsText = (world: World, serverId: string): string =>
  (world.nova?.migrations ?? [])
    .filter((m) => m.serverId === serverId)
    .map((m) => `${m.id} ${m.source}→${m.dest ?? '?'} ${m.status}`)
    .join(', ') || 'none';

const nodeEvents = (world: World, reason: string) =>
  world.events.filter((e) => e.kind === 'Node' && e.reason === reason && e.message.startsWith('nova: '));

function succeededUnconfirmed(world: World, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  for (const e of nodeEvents(world, 'MigrationSucceeded')) {
    const id = serverIdOf(e);
    const host = hostOfNode(world, e.name, opts);
    const server = world.nova?.servers.find((s) => s.id === id);
    // a server deleted since, or a host not known: nothing to compare with
    if (!id || !host || !server || server.host === undefined) continue;
    if (everMovedOff(world, id, host)) continue;
    // its owner shelved it there (Nova offloads it: it left the host), wherever an unshelve put it since
    if (ownerDid(world, id, (a) => a.action === 'shelve' && a.host === host)) continue;
    out.push(
      violation(
        'migration-succeeded-unconfirmed',
        `node/${e.name}`,
        `Event MigrationSucceeded "${e.message}", but Nova shows server ${server.name} on ${server.host}; its migrations: ${migrationsText(world, id)}`,
        `look at the server in Nova (\`openstack server migration list --server ${id}\`); drainer's report is wrong: file it with the agent's log`,
      ),
    );
  }
  return out;
}

function failedButMoved(world: World, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  const succeeded = new Set(nodeEvents(world, 'MigrationSucceeded').map((e) => `${e.name}/${serverIdOf(e)}`));
  for (const e of nodeEvents(world, 'MigrationFailed')) {
    const id = serverIdOf(e);
    const host = hostOfNode(world, e.name, opts);
    if (!id || !host || succeeded.has(`${e.name}/${id}`) || !movedOff(world, id, host)) continue;
    // drainer's attempts failed and its owner's resize took it away since: the failure was told right
    if (resizedOff(world, id, host)) continue;
    // the move off was begun after the failure was told: a later attempt (another evacuation), whose
    // own report follows once drainer sees it land (a poll later); the failure was right when told
    if (laterAttempt(world, id, host, e.at)) continue;
    const server = world.nova?.servers.find((s) => s.id === id);
    out.push(
      violation(
        'migration-failed-but-moved',
        `node/${e.name}`,
        `Event MigrationFailed "${e.message}", but Nova moved server ${server?.name ?? id} off ${host} (now on ${server?.host ?? '?'}) and no MigrationSucceeded says so`,
        'the server did move: count it as moved; drainer_migrations_total{result="failed"} over-counts it',
      ),
    );
  }
  return out;
}

function movedCounts(world: World, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  for (const n of world.nodes) {
    const rec = recordOf(n);
    const host = hostOfNode(world, n.name, opts);
    if (!rec || !host || !world.nova) continue;
    // a server moved off and deleted since is no longer listed; its migration record still says so
    const ids = new Set([
      ...world.nova.servers.map((s) => s.id),
      ...world.nova.migrations.map((m) => m.serverId),
    ]);
    // drainer counts a server its owner shelved off the host as moved (Nova offloads it: it left)
    const shelvedOff = (id: string) => ownerDid(world, id, (a) => a.action === 'shelve' && a.host === host);
    const ownerIds = (world.observations?.ownerActions ?? []).map((a) => a.serverId);
    const movedByNova = [...new Set([...ids, ...ownerIds])].filter(
      (id) => everMovedOff(world, id, host) || shelvedOff(id),
    ).length;
    const claims = [
      ...(rec.outcomes ?? []).filter((o) => o.plugin === 'nova').map((o) => ['outcome', o.moved] as const),
      ...(rec.progress?.nova ? [['progress', rec.progress.nova.moved] as const] : []),
    ];
    for (const [where, moved] of claims) {
      if (moved <= movedByNova) continue;
      out.push(
        violation(
          'moved-count-exceeds-nova',
          `node/${n.name}`,
          `the record's nova ${where} says ${moved} moved, but Nova shows ${movedByNova} server(s) moved off ${host}`,
          `compare \`drainer status -o json\` with \`openstack server list --all-projects --host ${host}\`; trust Nova`,
        ),
      );
    }
  }
  return out;
}

export const migrationTruth = (world: World, opts: CheckOptions): Violation[] => [
  ...succeededUnconfirmed(world, opts),
  ...failedButMoved(world, opts),
  ...movedCounts(world, opts),
];
