// drainer doctor's look at Nova, GETs only: every nova-compute service, and for the hosts that
// matter the servers on them and the migrations off them (with the servers they moved); every
// SHUTOFF server, for drainer's stop marks no agent will act on.
import type { Config } from '../config/schema.ts';
import { ConfigError, isNotFoundError } from '../errors.ts';
import type { NovaReader } from '../invariants/read-nova.ts';
import type { WorldMigration, WorldServer } from '../invariants/world.ts';
import { ComputeClient, createHttp, KeystoneSession } from '../plugins/nova/index.ts';
import type { NovaMigration, NovaServer } from '../plugins/nova/types.ts';
import { missingCredentials } from '../plugins/registry.ts';

/** How many moved servers doctor reads per host (the newest migrations first). */
const MOVED_SERVERS_READ = 50;
const FINISHED = new Set(['completed', 'confirmed', 'finished', 'done']);

// placedAt (an unshelve's placement) stays unset: only the server's action log says it, a read per
// server; serverHostAt then walks back through migrations alone, as before issue 48.
const toServer = (s: NovaServer): WorldServer => {
  const host = s['OS-EXT-SRV-ATTR:host'];
  const created = s.created ? Date.parse(s.created) : NaN;
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    ...(host ? { host } : {}),
    ...(s.metadata ? { metadata: s.metadata } : {}),
    ...(typeof s.flavor?.ram === 'number' ? { memoryMb: s.flavor.ram } : {}),
    ...(Number.isNaN(created) ? {} : { createdAt: created }),
  };
};

const toMigration = (m: NovaMigration): WorldMigration => {
  const updated = m.updated_at
    ? Date.parse(m.updated_at.endsWith('Z') ? m.updated_at : `${m.updated_at}Z`)
    : NaN;
  return {
    id: m.uuid ?? String(m.id),
    serverId: m.server_uuid ?? m.instance_uuid ?? '',
    status: m.status,
    source: m.source_compute ?? '',
    ...(m.dest_compute ? { dest: m.dest_compute } : {}),
    ...(m.migration_type ? { type: m.migration_type } : {}),
    ...(Number.isNaN(updated) ? {} : { updatedAt: updated }),
  };
};

/** A server gone since it moved: nothing to compare with. */
const unlessGone = (read: Promise<NovaServer>): Promise<NovaServer | undefined> =>
  read.catch((e: unknown) => {
    if (isNotFoundError(e)) return undefined;
    throw e;
  });

export function computeReader(compute: ComputeClient): NovaReader {
  return {
    async services(signal) {
      await compute.init(signal);
      return (await compute.listComputeServices(signal)).map((s) => ({
        host: s.host,
        status: s.status,
        disabledReason: s.disabled_reason ?? null,
      }));
    },
    async serversOnHost(host, signal) {
      return (await compute.listServersOnHost(host, signal)).map(toServer);
    },
    async stoppedServers(signal) {
      return (await compute.listStoppedServers(signal)).map(toServer);
    },
    async migrationsFrom(host, signal) {
      const migrations = (await compute.listHostMigrations(host, undefined, signal)).map(toMigration);
      const moved = [...new Set(migrations.filter((m) => FINISHED.has(m.status)).map((m) => m.serverId))];
      const read = await Promise.all(
        moved.slice(0, MOVED_SERVERS_READ).map((id) => unlessGone(compute.getServer(id, signal))),
      );
      return { migrations, servers: read.filter((s) => s !== undefined).map(toServer) };
    },
  };
}

/** The compute client of the configured cloud; undefined with nova.enabled false. */
export function novaFor(config: Config): ComputeClient | undefined {
  if (!config.nova.enabled) return undefined;
  const missing = missingCredentials(config.openstack);
  if (missing.length)
    throw new ConfigError(
      missing.map((m) => ({
        path: 'openstack.auth',
        message: `${m} is missing: drainer doctor cannot look at Nova (nova.enabled: false checks Kubernetes only)`,
      })),
    );
  const os = config.openstack;
  const http = createHttp({
    timeoutMs: os.requestTimeout * 1000,
    tls: { cacert: os.cacert, cert: os.cert, key: os.key, insecure: os.insecure },
  });
  const session = new KeystoneSession({ openstack: os, http, now: Date.now });
  return new ComputeClient({ http, session, maxMicroversion: config.nova.maxMicroversion });
}
