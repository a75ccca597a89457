// A World of the sandbox for the invariants (tests, the chaos soak): the Kubernetes half read over
// its API with the same reader `drainer doctor` uses, Nova's from the emulation's state, and the
// API server's answered requests up to the moment the read began (the read's own are left out).
import { readKubeWorld } from '../invariants/read-kube.ts';
import type {
  Observations,
  World,
  WorldMigration,
  WorldNova,
  WorldServer,
  WorldServerAction,
} from '../invariants/world.ts';
import type { KubeClients } from '../kube/client.ts';
import { MIGRATION_ENDED } from './controllers/kubevirt/migration.ts';
import { CREATED } from './kube/stamps.ts';
import type { OpenStackState, RequestLogEntry, ServerView } from './openstack/types.ts';
import type { Sandbox } from './index.ts';

const server = (s: ServerView): WorldServer => ({
  id: s.id,
  name: s.name,
  ...(s.host ? { host: s.host } : {}),
  status: s.status,
  memoryMb: s.ramMb,
  createdAt: s.createdAt,
  ...(s.placedAt !== undefined ? { placedAt: s.placedAt } : {}),
  ...(s.offloaded ? { offloaded: s.offloaded } : {}),
  metadata: { ...s.metadata },
});

const POWER = new Set(['os-stop', 'os-start']);
const MOVES = new Set(['migrate', 'resize', 'confirmResize', 'revertResize', 'os-migrateLive']);

/** The actions of a kind Nova accepted, from its request log; drainer's client says User-Agent drainer. */
function serverActions(log: readonly RequestLogEntry[], kinds: ReadonlySet<string>): WorldServerAction[] {
  return log.flatMap((r) => {
    const id = /\/servers\/([^/]+)\/action$/.exec(r.path)?.[1];
    if (!id || !r.action || !kinds.has(r.action) || r.status < 200 || r.status >= 300) return [];
    return [
      { serverId: id, action: r.action, byDrainer: r.userAgent?.startsWith('drainer') === true, at: r.at },
    ];
  });
}

/** All of Nova at once: the emulation has no policy that hides anything. */
export function sandboxNova(state: OpenStackState, log?: readonly RequestLogEntry[]): WorldNova {
  const migrations: WorldMigration[] = state.migrations().map((m) => ({
    id: String(m.id),
    serverId: m.serverId,
    status: m.status,
    source: m.sourceHost,
    ...(m.destHost ? { dest: m.destHost } : {}),
    type: m.type,
    updatedAt: m.updatedAt,
    createdAt: m.createdAt,
    ...(m.landedAt !== undefined ? { landedAt: m.landedAt } : {}),
  }));
  return {
    services: state
      .services()
      .filter((s) => s.binary === 'nova-compute')
      .map((s) => ({ host: s.host, status: s.status, disabledReason: s.disabledReason })),
    servers: state.servers().map(server),
    migrations,
    ...(log ? { powerActions: serverActions(log, POWER), moveActions: serverActions(log, MOVES) } : {}),
  };
}

export async function readSandboxWorld(
  sandbox: Pick<Sandbox, 'kube' | 'openstack'>,
  k: KubeClients,
  o: { namespace: string; observations?: Omit<Observations, 'requests'>; signal?: AbortSignal },
): Promise<World> {
  const requests = [...sandbox.kube.requestLog];
  const kube = await readKubeWorld(k, { namespace: o.namespace, ...(o.signal ? { signal: o.signal } : {}) });
  // One timeline: the request logs and Nova run on the scenario clock, while objects carry real
  // time in whole seconds (one of which is `scale` scenario seconds); the store kept the exact moments.
  const { stamps } = sandbox.kube.store;
  const events = kube.events.map((e) =>
    e.at === undefined ? e : { ...e, at: stamps.momentOf(e.uid, CREATED, e.at) },
  );
  const vmis = kube.vmis?.map((v) =>
    v.createdAt === undefined ? v : { ...v, createdAt: stamps.momentOf(v.uid, CREATED, v.createdAt) },
  );
  const vmiMoves = kube.vmiMoves?.map((m) =>
    m.endedAt === undefined ? m : { ...m, endedAt: stamps.momentOf(m.uid, MIGRATION_ENDED, m.endedAt) },
  );
  return {
    ...kube,
    events,
    ...(vmis ? { vmis } : {}),
    ...(vmiMoves ? { vmiMoves } : {}),
    nova: sandboxNova(sandbox.openstack.state, sandbox.openstack.requestLog),
    observations: { ...o.observations, requests },
  };
}
