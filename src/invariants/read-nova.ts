// Reads the Nova half of a World through a small port (the CLI fills it with the compute client, the
// tests with the sandbox's state): every nova-compute service, the servers on the hosts that matter
// and the migrations off those hosts; and every SHUTOFF server (drainer's stop marks), where the reader can.
import type { WorldMigration, WorldNova, WorldServer, WorldService } from './world.ts';

export interface NovaReader {
  services(signal?: AbortSignal): Promise<WorldService[]>;
  /** The servers on a host now. */
  serversOnHost(host: string, signal?: AbortSignal): Promise<WorldServer[]>;
  /** Every SHUTOFF server, wherever it is (where drainer's stop marks can be); optional. */
  stoppedServers?(signal?: AbortSignal): Promise<WorldServer[]>;
  /** The migrations whose source is the host (any status), with their servers' current host. */
  migrationsFrom(
    host: string,
    signal?: AbortSignal,
  ): Promise<{ migrations: WorldMigration[]; servers: WorldServer[] }>;
}

/** Services, and for each host given (the nodes' hosts, and every disabled one) its servers and migrations. */
export async function readNovaWorld(
  nova: NovaReader,
  hosts: (services: readonly WorldService[]) => readonly string[],
  signal?: AbortSignal,
): Promise<WorldNova> {
  const services = await nova.services(signal);
  const wanted = [...new Set(hosts(services))];
  const stopped = (await nova.stoppedServers?.(signal)) ?? [];
  const parts = await Promise.all(
    wanted.map(async (h) => {
      const [on, off] = await Promise.all([nova.serversOnHost(h, signal), nova.migrationsFrom(h, signal)]);
      return { servers: [...on, ...off.servers], migrations: off.migrations };
    }),
  );
  const servers = new Map<string, WorldServer>();
  for (const s of [...stopped, ...parts.flatMap((p) => p.servers)]) servers.set(s.id, s);
  const migrations = new Map<string, WorldMigration>();
  for (const m of parts.flatMap((p) => p.migrations)) migrations.set(m.id, m);
  return { services, servers: [...servers.values()], migrations: [...migrations.values()] };
}
