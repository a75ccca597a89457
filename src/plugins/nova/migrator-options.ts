// What the migrator's parts share: the Nova calls they make, what the Node record keeps per
// server, and the options the plugin hands them.
import type { WorkloadProgress } from '../../core/backends/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import type { NovaServer } from './types.ts';

export type MigratorCompute = Pick<
  ComputeClient,
  | 'listServersOnHost'
  | 'listServersChangedSince'
  | 'getServer'
  | 'liveMigrate'
  | 'migrate'
  | 'confirmResize'
  | 'stopServer'
  | 'listServerMigrations'
  | 'listHostMigrations'
  | 'listArrivingMigrations'
  | 'listMigrationsOf'
  | 'listInstanceActions'
  | 'userId'
  | 'abortMigration'
  | 'getServerMigration'
  | 'forceCompleteMigration'
  | 'atLeast'
>;

/** What the Node record keeps per server, so a restarted agent resumes instead of restarting. */
export interface MigrationRecord {
  attempts: number;
  migrationId?: number | string;
  startedAt: string;
  /**
   * The move drainer asked for (recorded before the call): a cold one leaves a resize to confirm. A
   * restarted agent tells it from someone else's by the server's action log (whose.ts); its request
   * id is not written (one more write of the Node per move), the user and time of the call tell.
   */
  move?: 'live-migrate' | 'cold-migrate';
  /** The stall clock of the running live migration, so a resumed one keeps it. */
  stall?: { migrationId: number | string; least: number; since: string };
  /** The live migration we forced to complete: never forced twice, even by a restarted agent. */
  forced?: number | string;
  /** Way out stop: drainer stopped it on the host (recorded before the call); restore starts it. */
  stopped?: boolean;
  /** The request id of that os-stop (its entry in the server's action log), once Nova answered. */
  stopRequest?: string;
  /** Way out notify: when its owner was first asked to move it (the nova.notifyTimeout clock). */
  notifiedAt?: string;
}

export interface MigratorOptions {
  compute: MigratorCompute;
  source: string;
  nova: NovaConfig;
  log: Logger;
  sleep: Sleep;
  now: () => number;
  signal: AbortSignal;
  abortOnCancel: boolean;
  /** The maintenance is declared a reboot (node drainer.dev/reboot=true): way out stop may stop servers. */
  reboot: boolean;
  resumed: Readonly<Record<string, MigrationRecord>>;
  /**
   * The first listing of the host was sent beside the disable (list-ahead.ts): a server scheduled
   * in before the disable took may be missing from it, so it starts the work but never ends it.
   */
  listedAhead?: boolean;
  /** Persists the record entry BEFORE the migration call is made. */
  beforeStart(serverId: string, entry: MigrationRecord): Promise<void>;
  /** Persists a change to a server's record entry (stall clock, forced completion, notify clock), made if missing. */
  remember(serverId: string, patch: Partial<MigrationRecord>): Promise<void>;
  progress(items: readonly WorkloadProgress[]): void;
  /** A server seen settled off the host after a move (drainer's or someone else's), as last read. */
  landed?(server: NovaServer): void;
  /**
   * Until when nothing is started on the host: a host shutdown's fallback has it (shutdown-stop.ts),
   * and a move submitted now would take back the server it stops.
   */
  heldUntil?(): number | undefined;
}
