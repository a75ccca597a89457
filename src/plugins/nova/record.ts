// Nova's piece of the Node record: what we changed (the service), and per-server attempts
// so a restarted agent adopts running migrations instead of starting second ones.
import type { PluginRecord } from '../../core/backends/plugin.ts';
import type { MigrationRecord } from './migrator-options.ts';

export interface NovaRecord {
  host: string;
  serviceId: string | number;
  disabledByUs: boolean;
  reason: string | null;
  microversion: string;
  migrations: Record<string, MigrationRecord>;
}

/** The record if it looks like ours; anything else counts as no record. */
export function parseNovaRecord(r: PluginRecord | undefined): NovaRecord | undefined {
  if (!r || typeof r.host !== 'string' || !r.host) return undefined;
  const migrations =
    r.migrations && typeof r.migrations === 'object' ? (r.migrations as Record<string, MigrationRecord>) : {};
  return {
    host: r.host,
    serviceId: typeof r.serviceId === 'number' || typeof r.serviceId === 'string' ? r.serviceId : '',
    disabledByUs: r.disabledByUs === true,
    reason: typeof r.reason === 'string' ? r.reason : null,
    microversion: typeof r.microversion === 'string' ? r.microversion : '',
    migrations,
  };
}

export const toPluginRecord = (r: NovaRecord): PluginRecord => ({ ...r, migrations: { ...r.migrations } });
