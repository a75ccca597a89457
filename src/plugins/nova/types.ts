// The parts of Nova's JSON that drainer reads (compute API v2.1).

export interface NovaService {
  /** Integer before 2.53, UUID from 2.53 on. */
  id: number | string;
  binary: string;
  host: string;
  zone?: string;
  status: 'enabled' | 'disabled';
  state?: 'up' | 'down';
  disabled_reason?: string | null;
  forced_down?: boolean;
}

export interface NovaHypervisor {
  id: number | string;
  hypervisor_hostname: string;
  state?: string;
  status?: string;
  service?: { id: number | string; host: string; disabled_reason?: string | null };
}

export interface NovaServer {
  id: string;
  name: string;
  status: string;
  tenant_id?: string;
  locked?: boolean;
  /** The server's metadata (its owner's key → value); drainer reads drainer.dev:maintenance. */
  metadata?: Record<string, string>;
  /** When Nova last changed the server (ISO 8601, Nova's clock). */
  updated?: string;
  /** When it was created (ISO 8601). */
  created?: string;
  'OS-EXT-SRV-ATTR:host'?: string | null;
  'OS-EXT-SRV-ATTR:hypervisor_hostname'?: string | null;
  'OS-EXT-STS:task_state'?: string | null;
  'OS-EXT-STS:vm_state'?: string | null;
  'OS-EXT-AZ:availability_zone'?: string | null;
  /** 2.96+: the zone the server was booted into on request (null: free to move). */
  pinned_availability_zone?: string | null;
  /** 2.47+ the flavor itself, before that only its id. */
  flavor?: NovaFlavorRef;
  /** "" for a server booted from a volume. */
  image?: string | { id?: string } | null;
  /** Shown for a server in ERROR (or DELETED): Nova's reason, e.g. "No valid host was found". */
  fault?: { code?: number; message?: string; created?: string };
}

/** A flavor as a server embeds it (2.47+) or as GET /flavors/{id} answers. */
export interface NovaFlavorRef {
  id?: string;
  vcpus?: number;
  ram?: number;
  disk?: number;
  ephemeral?: number;
  'OS-FLV-EXT-DATA:ephemeral'?: number;
  swap?: number | string;
}

export interface NovaServerGroup {
  id: string;
  name?: string;
  /** 2.64+ */
  policy?: string;
  /** before 2.64 */
  policies?: string[];
  members?: string[];
}

export interface NovaMigration {
  id: number;
  uuid?: string;
  status: string;
  source_compute?: string | null;
  dest_compute?: string | null;
  server_uuid?: string;
  instance_uuid?: string;
  migration_type?: string;
  created_at?: string;
  updated_at?: string | null;
  /** 2.23+, GET /servers/{id}/migrations[/{mid}] while it runs (null before libvirt reports). */
  memory_total_bytes?: number | null;
  memory_processed_bytes?: number | null;
  memory_remaining_bytes?: number | null;
  disk_total_bytes?: number | null;
  disk_processed_bytes?: number | null;
  disk_remaining_bytes?: number | null;
}

/** One entry of GET /servers/{id}/os-instance-actions (newest first). */
export interface NovaInstanceAction {
  /** stop, start, shelve, migrate, resize, confirmResize … (nova/compute/instance_actions.py). */
  action: string;
  /** The x-openstack-request-id of the call that asked for it. */
  request_id: string;
  start_time?: string;
  user_id?: string | null;
}

export const hostOf = (s: NovaServer): string | null | undefined => s['OS-EXT-SRV-ATTR:host'];
export const taskStateOf = (s: NovaServer): string | null => s['OS-EXT-STS:task_state'] ?? null;

/** The server's memory: its flavor's RAM, embedded from 2.47 (before, only its id: unknown). */
export const memoryField = (s: NovaServer): { memoryBytes?: number } =>
  typeof s.flavor?.ram === 'number' ? { memoryBytes: s.flavor.ram * 1024 * 1024 } : {};
