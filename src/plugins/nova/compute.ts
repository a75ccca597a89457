// Typed Nova compute client: one method a Nova call. The transport under it (compute-transport.ts)
// authenticates every call through the Keystone session and carries the negotiated microversion.
import { ApiError, isNotFoundError } from '../../errors.ts';
import { ComputeTransport, dateOf } from './compute-transport.ts';
import type {
  NovaFlavorRef,
  NovaHypervisor,
  NovaInstanceAction,
  NovaMigration,
  NovaServer,
  NovaServerGroup,
  NovaService,
} from './types.ts';

/** A migration's statuses before its server has landed on the destination (Nova's, any type). */
const ARRIVING = new Set([
  'accepted',
  'queued',
  'preparing',
  'running',
  'pre-migrating',
  'migrating',
  'post-migrating',
]);

export class ComputeClient extends ComputeTransport {
  // --- services -------------------------------------------------------------------------

  /** nova-compute services on exactly this host (Nova's `host` filter is an exact match). */
  async listServices(host: string, signal?: AbortSignal): Promise<NovaService[]> {
    const res = await this.call<{ services?: NovaService[] }>('GET', '/os-services', {
      searchParams: { binary: 'nova-compute', host },
      signal,
    });
    return (res.body?.services ?? []).filter((s) => s.host === host);
  }

  async disableService(svc: NovaService, reason: string, signal?: AbortSignal): Promise<void> {
    await this.init(signal); // the request shape depends on the microversion
    if (this.atLeast(53)) {
      await this.call('PUT', `/os-services/${encodeURIComponent(String(svc.id))}`, {
        json: { status: 'disabled', disabled_reason: reason },
        signal,
      });
    } else {
      await this.call('PUT', '/os-services/disable-log-reason', {
        json: { host: svc.host, binary: 'nova-compute', disabled_reason: reason },
        signal,
      });
    }
  }

  async enableService(svc: NovaService, signal?: AbortSignal): Promise<void> {
    await this.init(signal); // the request shape depends on the microversion
    if (this.atLeast(53)) {
      await this.call('PUT', `/os-services/${encodeURIComponent(String(svc.id))}`, {
        json: { status: 'enabled' },
        signal,
      });
    } else {
      await this.call('PUT', '/os-services/enable', {
        json: { host: svc.host, binary: 'nova-compute' },
        signal,
      });
    }
  }

  // --- hypervisors ----------------------------------------------------------------------

  /**
   * Hypervisors whose hostname CONTAINS `pattern` (2.53+ server-side; before that every
   * hypervisor). Callers filter exactly. No match is an empty list, not an error.
   */
  async listHypervisors(pattern: string, signal?: AbortSignal): Promise<NovaHypervisor[]> {
    await this.init(signal); // the request shape depends on the microversion
    if (this.atLeast(53)) {
      try {
        const res = await this.call<{ hypervisors?: NovaHypervisor[] }>('GET', '/os-hypervisors/detail', {
          searchParams: { hypervisor_hostname_pattern: pattern },
          signal,
        });
        return res.body?.hypervisors ?? [];
      } catch (err) {
        if (isNotFoundError(err)) return [];
        throw err;
      }
    }
    return this.paged<NovaHypervisor>('/os-hypervisors/detail', 'hypervisors', {}, signal);
  }

  // --- capacity (read-only) -------------------------------------------------------------

  /** Every nova-compute service of the cloud. */
  async listComputeServices(signal?: AbortSignal): Promise<NovaService[]> {
    const res = await this.call<{ services?: NovaService[] }>('GET', '/os-services', {
      searchParams: { binary: 'nova-compute' },
      signal,
    });
    return res.body?.services ?? [];
  }

  /** Every hypervisor (service host → hypervisor hostname, the Placement provider's name). */
  async listAllHypervisors(signal?: AbortSignal): Promise<NovaHypervisor[]> {
    return this.paged<NovaHypervisor>('/os-hypervisors/detail', 'hypervisors', {}, signal);
  }

  async getFlavor(id: string, signal?: AbortSignal): Promise<NovaFlavorRef> {
    const res = await this.call<{ flavor: NovaFlavorRef }>('GET', `/flavors/${encodeURIComponent(id)}`, {
      signal,
    });
    return res.body.flavor;
  }

  /** Server groups of every project (policy from 2.64, policies before). */
  async listServerGroups(signal?: AbortSignal): Promise<NovaServerGroup[]> {
    const res = await this.call<{ server_groups?: NovaServerGroup[] }>('GET', '/os-server-groups', {
      searchParams: { all_projects: 'true' },
      signal,
    });
    return res.body?.server_groups ?? [];
  }

  // --- servers --------------------------------------------------------------------------

  /**
   * Every server on the host, in every project, over all pages. `onNovaNow` hears Nova's clock
   * (its Date header), where the changes that follow the listing start.
   */
  async listServersOnHost(
    host: string,
    signal?: AbortSignal,
    onNovaNow?: (ms: number) => void,
  ): Promise<NovaServer[]> {
    return this.paged<NovaServer>('/servers/detail', 'servers', { all_tenants: 1, host }, signal, (res) => {
      const date = dateOf(res);
      if (date !== undefined) onNovaNow?.(date);
    });
  }

  /** Every SHUTOFF server of every project, on any host (drainer doctor's look for stop marks). */
  listStoppedServers(signal?: AbortSignal): Promise<NovaServer[]> {
    return this.paged<NovaServer>(
      '/servers/detail',
      'servers',
      { all_tenants: 1, status: 'SHUTOFF' },
      signal,
    );
  }

  /**
   * Every server (all projects, any host, deleted ones included) whose record changed at or after
   * `since` on Nova's clock: one request tells how every in-flight server is doing. Also returns
   * Nova's clock as its Date header shows it, for the next `since`. Never the servers' `updated`:
   * each is stamped by the clock of whichever host wrote it, and one running fast would move the
   * window past every real change.
   */
  async listServersChangedSince(
    since: Date,
    signal?: AbortSignal,
  ): Promise<{ servers: NovaServer[]; novaNow: number | undefined }> {
    const filters = { all_tenants: 1, 'changes-since': since.toISOString() };
    let novaNow: number | undefined;
    const servers = await this.paged<NovaServer>('/servers/detail', 'servers', filters, signal, (res) => {
      const date = dateOf(res);
      if (date !== undefined) novaNow = Math.max(novaNow ?? date, date);
    });
    return { servers, novaNow };
  }

  async getServer(id: string, signal?: AbortSignal): Promise<NovaServer> {
    const res = await this.call<{ server: NovaServer }>('GET', `/servers/${encodeURIComponent(id)}`, {
      signal,
    });
    return res.body.server;
  }

  /** Live-migrate to a host the scheduler picks; answers the call's request id (its action log entry). */
  async liveMigrate(id: string, signal?: AbortSignal): Promise<string | undefined> {
    await this.init(signal); // the request shape depends on the microversion
    if (this.atLeast(25)) {
      return this.action(id, { 'os-migrateLive': { host: null, block_migration: 'auto' } }, signal);
    }
    try {
      return await this.action(
        id,
        { 'os-migrateLive': { host: null, block_migration: false, disk_over_commit: false } },
        signal,
      );
    } catch (err) {
      // Before 2.25 the client must choose; local disks answer 400 naming shared storage.
      if (!(
        err instanceof ApiError &&
        err.status === 400 &&
        /shared storage/i.test(err.details.fault ?? '')
      )) {
        throw err;
      }
      return this.action(
        id,
        { 'os-migrateLive': { host: null, block_migration: true, disk_over_commit: false } },
        signal,
      );
    }
  }

  /** Cold migration (the server goes RESIZE → VERIFY_RESIZE); answers the call's request id. */
  migrate(id: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.action(id, { migrate: null }, signal);
  }

  /** Every migration record of one server (GET /os-migrations?instance_uuid=), first page: newest first from 2.59. */
  async listMigrationsOf(id: string, signal?: AbortSignal): Promise<NovaMigration[]> {
    await this.init(signal);
    const res = await this.call<{ migrations?: NovaMigration[] }>('GET', '/os-migrations', {
      searchParams: { instance_uuid: id },
      signal,
    });
    return res.body?.migrations ?? [];
  }

  async confirmResize(id: string, signal?: AbortSignal): Promise<void> {
    await this.action(id, { confirmResize: null }, signal);
  }

  /**
   * Way out stop: powers the server off where it is (202; SHUTOFF a moment later). Answers the
   * call's request id, which names this stop in the server's action log.
   */
  stopServer(id: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.action(id, { 'os-stop': null }, signal);
  }

  /** Restore of way out stop: powers it on again (answers the call's request id, as stopServer). */
  startServer(id: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.action(id, { 'os-start': null }, signal);
  }

  /** What was done to the server, newest first (its action log). */
  async listInstanceActions(id: string, signal?: AbortSignal): Promise<NovaInstanceAction[]> {
    const res = await this.call<{ instanceActions?: NovaInstanceAction[] }>(
      'GET',
      `/servers/${encodeURIComponent(id)}/os-instance-actions`,
      { signal },
    );
    return res.body?.instanceActions ?? [];
  }

  /** One metadata item (PUT …/metadata/{key}); Nova refuses it (409) while a task runs. */
  async setServerMetadataItem(id: string, key: string, value: string, signal?: AbortSignal): Promise<void> {
    const path = `/servers/${encodeURIComponent(id)}/metadata/${encodeURIComponent(key)}`;
    await this.call('PUT', path, { json: { meta: { [key]: value } }, signal });
  }

  /** Removes one metadata item; one already gone (404) is no error. */
  async deleteServerMetadataItem(id: string, key: string, signal?: AbortSignal): Promise<void> {
    const path = `/servers/${encodeURIComponent(id)}/metadata/${encodeURIComponent(key)}`;
    try {
      await this.call('DELETE', path, { signal });
    } catch (err) {
      if (!isNotFoundError(err)) throw err;
    }
  }

  /** In-progress migrations of a server (2.23+). */
  async listServerMigrations(id: string, signal?: AbortSignal): Promise<NovaMigration[]> {
    const res = await this.call<{ migrations?: NovaMigration[] }>(
      'GET',
      `/servers/${encodeURIComponent(id)}/migrations`,
      { signal },
    );
    return res.body?.migrations ?? [];
  }

  /**
   * Migrations on their way into this host that have not landed yet (the server's host is still
   * the source): ones scheduled before the host was disabled, which Nova still completes.
   * `host` matches source or destination; the first page is enough (2.59+: newest first).
   */
  async listArrivingMigrations(dest: string, signal?: AbortSignal): Promise<NovaMigration[]> {
    await this.init(signal);
    const res = await this.call<{ migrations?: NovaMigration[] }>('GET', '/os-migrations', {
      searchParams: { host: dest },
      signal,
    });
    return (res.body?.migrations ?? []).filter(
      (m) => m.dest_compute === dest && m.source_compute !== dest && ARRIVING.has(m.status),
    );
  }

  /**
   * Migration records with this source host (every status: the per-server list shows only
   * running ones), first page only, which from 2.59 on is the newest first; `since` narrows
   * it by `changes-since` where Nova supports that (2.59+).
   */
  async listHostMigrations(source: string, since?: Date, signal?: AbortSignal): Promise<NovaMigration[]> {
    await this.init(signal); // the filters depend on the microversion
    const searchParams: Record<string, string> = { source_compute: source };
    if (since && this.atLeast(59)) searchParams['changes-since'] = since.toISOString();
    const res = await this.call<{ migrations?: NovaMigration[] }>('GET', '/os-migrations', {
      searchParams,
      signal,
    });
    return res.body?.migrations ?? [];
  }

  /** One live migration in progress with its copy counters (2.23+); 404 once it is not running. */
  async getServerMigration(
    id: string,
    migrationId: number | string,
    signal?: AbortSignal,
  ): Promise<NovaMigration> {
    const res = await this.call<{ migration?: NovaMigration }>(
      'GET',
      `/servers/${encodeURIComponent(id)}/migrations/${encodeURIComponent(String(migrationId))}`,
      { signal },
    );
    if (!res.body?.migration) {
      throw new ApiError('API', `Nova answered no migration ${migrationId} for server ${id}`, {
        api: 'nova',
      });
    }
    return res.body.migration;
  }

  /** Pauses the guest to finish a running live migration (2.22+; 400 unless it is running). */
  async forceCompleteMigration(
    id: string,
    migrationId: number | string,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.call(
      'POST',
      `/servers/${encodeURIComponent(id)}/migrations/${encodeURIComponent(String(migrationId))}/action`,
      { signal, json: { force_complete: null } },
    );
  }

  /** Abort a running (2.24+) or queued (2.65+) live migration. */
  async abortMigration(id: string, migrationId: number | string, signal?: AbortSignal): Promise<void> {
    await this.call(
      'DELETE',
      `/servers/${encodeURIComponent(id)}/migrations/${encodeURIComponent(String(migrationId))}`,
      { signal },
    );
  }
}

/**
 * Nova's 400 to a confirm of a resize someone confirmed first (MigrationNotFound: no migration left
 * `finished`): the agent of the host it landed on, its owner, or drainer's own earlier confirm.
 * Two confirmers meet it whichever way they order their reads; nothing is left to confirm.
 */
export const isNotResized = (err: unknown): err is ApiError =>
  err instanceof ApiError && err.status === 400 && /not been resized/i.test(err.details.fault ?? '');
