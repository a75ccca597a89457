// The real Nova side of the cases, with the functional suite's helpers: servers booted on the node's compute
// host, and where Nova says they are.
import { Cleanup } from '../../functional/support/cleanup.ts';
import { cloudFromEnv } from '../../functional/support/cloud-env.ts';
import {
  bootServer,
  computeService,
  deleteServer,
  findFlavorId,
  findImageId,
  getServer,
  setService,
  waitServer,
  type ServerView,
} from '../../functional/support/nova.ts';
import { uniqueName } from '../../functional/support/run-id.ts';
import { expectStatus, Session } from '../../functional/support/session.ts';
import { readOpenrc, type RealEnv } from './env.ts';

export class Nova {
  readonly host: string;
  readonly admin: Session;
  readonly cleanup = new Cleanup();
  private readonly imageId: string;
  private readonly flavorId: string;

  private constructor(host: string, admin: Session, imageId: string, flavorId: string) {
    this.host = host;
    this.admin = admin;
    this.imageId = imageId;
    this.flavorId = flavorId;
  }

  static async open(env: RealEnv): Promise<Nova> {
    const admin = await Session.open(cloudFromEnv(readOpenrc(env.openrc)));
    return new Nova(env.novaHost, admin, await findImageId(admin), await findFlavorId(admin));
  }

  /** Boots `n` servers pinned to the node's compute host and waits until they are ACTIVE there. */
  async boot(label: string, n: number): Promise<ServerView[]> {
    const ids = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const name = uniqueName(`${label}-${i}`);
        const id = await bootServer(this.admin, {
          name,
          host: this.host,
          imageId: this.imageId,
          flavorId: this.flavorId,
        });
        this.cleanup.add(`server ${name}`, () => deleteServer(this.admin, id));
        return id;
      }),
    );
    return Promise.all(ids.map((id) => waitServer(this.admin, id, 'ACTIVE')));
  }

  /** Which of these servers Nova still shows on the node's compute host (or migrating from it). */
  async stillOnHost(servers: readonly ServerView[]): Promise<ServerView[]> {
    const now = await Promise.all(servers.map((s) => getServer(this.admin, s.id)));
    return now.filter(
      (s): s is ServerView => s !== undefined && (s.host === this.host || s.taskState !== null),
    );
  }

  async server(id: string): Promise<ServerView | undefined> {
    return getServer(this.admin, id);
  }

  async service() {
    return computeService(this.admin, this.host);
  }

  /** Nova's API version document and the node's hypervisor, as REAL.md's figures say them. */
  async versions(): Promise<{ api: string; hypervisor: string }> {
    const doc = expectStatus(
      await this.admin.request('compute', 'GET', '/'),
      'GET the compute API version',
      200,
    );
    const v = (doc.body as { version: { id: string; min_version: string; version: string } }).version;
    const hv = expectStatus(
      await this.admin.request('compute', 'GET', '/os-hypervisors/detail', {
        searchParams: { hypervisor_hostname_pattern: this.host },
      }),
      'GET the hypervisor of the compute host',
      200,
    );
    const h = (hv.body as { hypervisors: { hypervisor_type?: string; hypervisor_version?: number }[] })
      .hypervisors[0];
    return {
      api: `${v.id}, microversions ${v.min_version} to ${v.version}`,
      hypervisor: `${h?.hypervisor_type ?? 'unknown'} (version ${h?.hypervisor_version ?? '?'})`,
    };
  }

  /** A previous run's leftover: the host's service disabled by drainer is enabled again. */
  async enableIfOurs(): Promise<void> {
    const svc = await this.service();
    if (svc.status !== 'enabled' && svc.disabledReason?.startsWith('drainer'))
      await setService(this.admin, this.host, true);
  }
}

/** Follows servers while a drain runs: when the last of them was first seen off the host. */
export class Departures {
  lastLeftAt: number | undefined;
  private stop = false;
  private readonly loop: Promise<void>;

  constructor(nova: Nova, servers: readonly ServerView[], intervalMs = 250) {
    this.loop = (async () => {
      while (!this.stop) {
        const left = await nova.stillOnHost(servers);
        if (left.length === 0) {
          this.lastLeftAt ??= Date.now();
          return;
        }
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
  }

  async end(): Promise<void> {
    this.stop = true;
    await this.loop;
  }
}
