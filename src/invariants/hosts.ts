// Which nova-compute host is a node's, and where a server or VMI was at a given moment, from what
// Nova and KubeVirt record (migration records with their end times) rather than from drainer's word.
import type { NodeRecord } from '../core/record/record.ts';
import type { CheckOptions, World, WorldMigration, WorldNode } from './world.ts';

/** Migration statuses after which the server runs on the destination. */
export const MOVED_STATUSES = new Set(['completed', 'confirmed', 'finished', 'done']);

/** When the move put the server on its destination: landedAt where known, else Nova's updated_at. */
const movedAt = (m: WorldMigration): number => m.landedAt ?? m.updatedAt ?? 0;

export const recordOf = (n: WorldNode | undefined): NodeRecord | undefined =>
  n?.record.kind === 'ok' ? n.record.record : undefined;

/** The host the node's record names (nova's piece), if any. */
const recordedHost = (n: WorldNode | undefined): string | undefined => {
  const h = recordOf(n)?.plugins.nova?.host;
  return typeof h === 'string' && h ? h : undefined;
};

const short = (host: string): string => host.split('.')[0] ?? host;

/**
 * The node's nova-compute host: the record's, the configured mapping, the exact name, or a service
 * host whose short name is the node's (openstack-helm's FQDN hosts).
 */
export function hostOfNode(
  world: World,
  node: string,
  opts: Pick<CheckOptions, 'hostMapping'>,
): string | undefined {
  const fromRecord = recordedHost(world.nodes.find((n) => n.name === node));
  if (fromRecord) return fromRecord;
  const mapped = opts.hostMapping?.[node];
  if (mapped) return mapped;
  const hosts = world.nova?.services.map((s) => s.host) ?? [];
  return hosts.find((h) => h === node) ?? hosts.find((h) => short(h) === node);
}

/** The node a nova-compute host belongs to: the record naming it, the mapping, or the same (short) name. */
export function nodeOfHost(
  world: World,
  host: string,
  opts: Pick<CheckOptions, 'hostMapping'>,
): string | undefined {
  const byRecord = world.nodes.find((n) => recordedHost(n) === host);
  if (byRecord) return byRecord.name;
  const mapped = Object.entries(opts.hostMapping ?? {}).find(([, h]) => h === host)?.[0];
  if (mapped) return mapped;
  return world.nodes.find((n) => n.name === host || n.name === short(host))?.name;
}

/** Migration statuses after which the server is back where it was, or never left. */
const NOT_MOVED = new Set(['error', 'failed', 'cancelled', 'aborted', 'reverted']);

/**
 * A migration whose record has not ended while its server already runs on the destination: a live
 * migration in Nova's post-migration (still `running`: post_live_migration_at_destination switches
 * the host, the source marks it `completed` seconds later), a cold one in `post-migrating` or waiting
 * for its confirm. Known from landedAt (the sandbox), else from the server's host being the record's
 * destination: it switches only then.
 */
const landed = (world: World, m: WorldMigration): boolean =>
  !NOT_MOVED.has(m.status) &&
  m.dest !== undefined &&
  (m.landedAt !== undefined || world.nova?.servers.find((s) => s.id === m.serverId)?.host === m.dest);

/** The moves of a server that put it on their destination (ended, or landed), oldest first. */
export const movesOf = (world: World, serverId: string): WorldMigration[] =>
  (world.nova?.migrations ?? [])
    .filter((m) => m.serverId === serverId && m.dest && (MOVED_STATUSES.has(m.status) || landed(world, m)))
    .sort((a, b) => movedAt(a) - movedAt(b));

/**
 * Where the server ran at time t: its host now, walked back through every move that landed after t.
 * Before an unshelve placed it (it was offloaded, on no host), or now offloaded: the host its last
 * shelve offload took it from, walked back the same way, for a t within that stay. Undefined when
 * Nova does not show the host, the server was created after t, or t falls before what is known.
 */
export function serverHostAt(world: World, serverId: string, t: number): string | undefined {
  const server = world.nova?.servers.find((s) => s.id === serverId);
  if (!server || (server.createdAt !== undefined && t < server.createdAt)) return undefined;
  const walkBack = (host: string, until: number) => {
    const between = movesOf(world, serverId).filter((m) => movedAt(m) > t && movedAt(m) <= until);
    for (const m of between.reverse()) host = m.source;
    return host;
  };
  if (server.host !== undefined && (server.placedAt === undefined || t >= server.placedAt))
    return walkBack(server.host, Infinity);
  const off = server.offloaded;
  if (!off || t >= off.at || (off.since !== undefined && t < off.since)) return undefined;
  return walkBack(off.from, off.at);
}

/**
 * Where the VMI ran at time t: its node now, walked back through every migration that ended after t.
 * Undefined when it was made after t (a VM started again since: a new VMI under the old name).
 */
export function vmiNodeAt(world: World, ns: string, name: string, t: number): string | undefined {
  const vmi = world.vmis?.find((v) => v.namespace === ns && v.name === name);
  if (vmi?.createdAt !== undefined && t < vmi.createdAt) return undefined;
  let node = vmi?.node;
  const later = (world.vmiMoves ?? [])
    .filter((m) => m.namespace === ns && m.vmi === name && m.phase === 'Succeeded' && (m.endedAt ?? 0) > t)
    .sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0));
  for (const m of later) node = m.source ?? node;
  return node;
}
