// Typed Placement client: the endpoint of catalog type "placement", its own microversion
// (`OpenStack-API-Version: placement 1.N`, negotiated from the version document as compute's is),
// and the three read-only calls the capacity check makes.
import type { Http, HttpResponse } from './http.ts';
import type { KeystoneSession } from './keystone.ts';

/** The newest Placement microversion drainer knows; nothing it reads changed after it. */
export const PLACEMENT_MAX_MINOR = 39;

export interface ResourceProvider {
  uuid: string;
  name: string;
  parent_provider_uuid?: string | null;
  root_provider_uuid?: string;
}

export interface Inventory {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

interface VersionsDoc {
  versions?: { id?: string; max_version?: string; min_version?: string }[];
}

export function placementMinor(serverMax: string | undefined): number {
  const m = /^1\.(\d+)$/.exec(serverMax?.trim() ?? '');
  return Math.max(0, Math.min(m ? Number(m[1]) : 0, PLACEMENT_MAX_MINOR));
}

export class PlacementClient {
  readonly #http: Http;
  readonly #session: KeystoneSession;
  #endpoint: string | undefined;
  #minor = 0;

  constructor(opts: { http: Http; session: KeystoneSession }) {
    this.#http = opts.http;
    this.#session = opts.session;
  }

  /** False when the cloud's catalog has no Placement (very old clouds): nothing to ask. */
  available(signal?: AbortSignal): Promise<boolean> {
    return this.#session.hasService('placement', signal);
  }

  get microversion(): string {
    return `1.${this.#minor}`;
  }

  async init(signal?: AbortSignal): Promise<void> {
    if (this.#endpoint !== undefined) return;
    const endpoint = (await this.#session.endpoint('placement', signal)).replace(/\/+$/, '');
    // the root document needs no token
    const res = await this.#http.request<VersionsDoc>({
      api: 'placement',
      method: 'GET',
      url: endpoint,
      signal,
    });
    const v1 = res.body?.versions?.find((v) => v.id === 'v1.0') ?? res.body?.versions?.[0];
    this.#minor = placementMinor(v1?.max_version);
    this.#endpoint = endpoint;
  }

  async #get<T>(path: string, signal?: AbortSignal): Promise<HttpResponse<T>> {
    await this.init(signal);
    const url = `${this.#endpoint}${path}`;
    return this.#session.withAuth(
      (token) =>
        this.#http.request<T>({
          api: 'placement',
          method: 'GET',
          url,
          headers: { 'x-auth-token': token, 'openstack-api-version': `placement ${this.microversion}` },
          signal,
        }),
      signal,
    );
  }

  async providers(signal?: AbortSignal): Promise<ResourceProvider[]> {
    const res = await this.#get<{ resource_providers?: ResourceProvider[] }>('/resource_providers', signal);
    return res.body?.resource_providers ?? [];
  }

  async inventories(uuid: string, signal?: AbortSignal): Promise<Record<string, Inventory>> {
    const res = await this.#get<{ inventories?: Record<string, Inventory> }>(
      `/resource_providers/${encodeURIComponent(uuid)}/inventories`,
      signal,
    );
    return res.body?.inventories ?? {};
  }

  async usages(uuid: string, signal?: AbortSignal): Promise<Record<string, number>> {
    const res = await this.#get<{ usages?: Record<string, number> }>(
      `/resource_providers/${encodeURIComponent(uuid)}/usages`,
      signal,
    );
    return res.body?.usages ?? {};
  }
}

/** Room left per class: (total − reserved) × allocation_ratio − used, and each class's max_unit. */
export function roomOf(
  inventories: Record<string, Inventory>,
  usages: Record<string, number>,
): { free: Record<string, number>; maxUnit: Record<string, number> } {
  const free: Record<string, number> = {};
  const maxUnit: Record<string, number> = {};
  for (const [cls, inv] of Object.entries(inventories)) {
    free[cls] = Math.floor((inv.total - inv.reserved) * inv.allocation_ratio) - (usages[cls] ?? 0);
    maxUnit[cls] = inv.max_unit;
  }
  return { free, maxUnit };
}
