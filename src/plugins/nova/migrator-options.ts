// What the migrator's parts share: the Nova calls they make, what the Node record keeps per
// server, and the options the plugin hands them.
import type { WorkloadProgress } from '../../core/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';

export type MigratorCompute = Pick<
  ComputeClient,
  | 'listServersOnHost'
  | 'listServersChangedSince'
  | 'getServer'
  | 'liveMigrate'
  | 'migrate'
  | 'confirmResize'
  | 'listServerMigrations'
  | 'listHostMigrations'
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
  /** The stall clock of the running live migration, so a resumed one keeps it. */
  stall?: { migrationId: number | string; least: number; since: string };
  /** The live migration we forced to complete: never forced twice, even by a restarted agent. */
  forced?: number | string;
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
  resumed: Readonly<Record<string, MigrationRecord>>;
  /** Persists the record entry BEFORE the migration call is made. */
  beforeStart(serverId: string, entry: MigrationRecord): Promise<void>;
  /** Persists a change to a server's record entry (stall clock, forced completion). */
  remember(serverId: string, patch: Partial<MigrationRecord>): Promise<void>;
  progress(items: readonly WorkloadProgress[]): void;
}
