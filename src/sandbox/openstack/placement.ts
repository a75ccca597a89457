// Placement (/placement): one resource provider per compute node, named by its hypervisor
// hostname and sharing its UUID (as Nova's hypervisor id from 2.53). Inventories come from the
// host's size with Nova's initial allocation ratios; usages are read from the emulated servers
// at request time, so they follow every boot and move (a migration in flight also holds its
// destination, as Nova's migration allocation does).
import type { IncomingHttpHeaders } from 'node:http';
import type { Reply } from './http.ts';
import { requestId } from './http.ts';
import type { Identity } from './identity.ts';
import type { ComputeNode, NovaModel } from './nova/model.ts';
import { isDeleted } from './nova/model.ts';

/** The newest microversion the real stack (Placement 8, Zed) serves. */
export const PLACEMENT_MAX = 39;

const RATIOS = { VCPU: 4.0, MEMORY_MB: 1.0, DISK_GB: 1.0 };
const RESERVED_RAM_MB = 512;
const HOLDING = new Set([
  'accepted',
  'queued',
  'preparing',
  'running',
  'post-migrating',
  'pre-migrating',
  'migrating',
]);

export interface PlacementRequest {
  method: string;
  /** Path after /placement. */
  path: string;
  headers: IncomingHttpHeaders;
}

function errors(status: number, title: string, detail: string, id: string): Reply {
  return {
    status,
    pythonJson: true,
    body: { errors: [{ status, title, detail, code: 'placement.undefined_code', request_id: id }] },
  };
}

export class Placement {
  readonly #model: NovaModel;
  readonly #identity: Identity;
  readonly #identityUrl: string;

  constructor(opts: { model: NovaModel; identity: Identity; identityUrl: string }) {
    this.#model = opts.model;
    this.#identity = opts.identity;
    this.#identityUrl = opts.identityUrl;
  }

  handle(req: PlacementRequest): Reply {
    const id = requestId();
    const path = req.path.replace(/\/+$/, '');
    const base = { 'x-openstack-request-id': id };
    if (path === '' && req.method === 'GET') {
      const body = {
        versions: [
          {
            id: 'v1.0',
            max_version: `1.${PLACEMENT_MAX}`,
            min_version: '1.0',
            status: 'CURRENT',
            links: [{ rel: 'self', href: '' }],
          },
        ],
      };
      return { status: 200, pythonJson: true, body, headers: { ...base, ...versionHeaders(0) } };
    }
    const token = req.headers['x-auth-token'];
    if (!this.#identity.validate(Array.isArray(token) ? token[0] : token)) {
      return {
        status: 401,
        pythonJson: true,
        headers: { ...base, 'WWW-Authenticate': `Keystone uri="${this.#identityUrl}"` },
        body: {
          error: {
            code: 401,
            title: 'Unauthorized',
            message: 'The request you have made requires authentication.',
          },
        },
      };
    }
    const asked = negotiate(req.headers);
    if (asked.kind === 'bad') {
      return {
        ...errors(
          400,
          'Bad Request',
          `The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n Invalid microversion: invalid version string: ${asked.text}`,
          id,
        ),
        headers: base,
      };
    }
    const minor = asked.minor;
    if (asked.major !== 1 || minor > PLACEMENT_MAX) {
      // the real one names the range, and has no error code here
      const detail = `The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: ${asked.text}`;
      return {
        status: 406,
        pythonJson: true,
        headers: base,
        body: {
          errors: [
            {
              status: 406,
              title: 'Not Acceptable',
              detail,
              request_id: id,
              max_version: `1.${PLACEMENT_MAX}`,
              min_version: '1.0',
            },
          ],
        },
      };
    }
    const reply = this.#route(req.method, path, minor, id);
    return { ...reply, headers: { ...base, ...versionHeaders(minor), ...reply.headers } };
  }

  #route(method: string, path: string, minor: number, id: string): Reply {
    if (method !== 'GET')
      return errors(405, 'Method Not Allowed', 'The method specified is not allowed for this resource.', id);
    if (path === '/resource_providers') {
      return {
        status: 200,
        pythonJson: true,
        body: { resource_providers: this.#model.nodes.map((n) => this.#provider(n, minor)) },
      };
    }
    const m = /^\/resource_providers\/([^/]+)(?:\/(inventories|usages))?$/.exec(path);
    const node = m ? this.#model.nodes.find((n) => n.uuid === m[1]) : undefined;
    if (!m) return errors(404, 'Not Found', 'The resource could not be found.', id);
    if (!node) return errors(404, 'Not Found', `No resource provider with uuid ${m[1]} found`, id);
    const generation = this.#generation(node);
    if (m[2] === 'inventories')
      return {
        status: 200,
        pythonJson: true,
        body: { resource_provider_generation: generation, inventories: inventories(node) },
      };
    if (m[2] === 'usages')
      return {
        status: 200,
        pythonJson: true,
        body: { resource_provider_generation: generation, usages: this.usages(node) },
      };
    return { status: 200, pythonJson: true, body: this.#provider(node, minor) };
  }

  #generation(_node: ComputeNode): number {
    // Nova bumps it on every inventory change; ours never change after start
    return 1;
  }

  #provider(n: ComputeNode, minor: number): Record<string, unknown> {
    const self = `/resource_providers/${n.uuid}`;
    const links = [
      { rel: 'self', href: self },
      { rel: 'inventories', href: `${self}/inventories` },
      { rel: 'usages', href: `${self}/usages` },
      ...(minor >= 1 ? [{ rel: 'aggregates', href: `${self}/aggregates` }] : []),
      ...(minor >= 6 ? [{ rel: 'traits', href: `${self}/traits` }] : []),
      ...(minor >= 11 ? [{ rel: 'allocations', href: `${self}/allocations` }] : []),
    ];
    return {
      uuid: n.uuid,
      name: n.hostname,
      generation: this.#generation(n),
      links,
      ...(minor >= 14 ? { parent_provider_uuid: null, root_provider_uuid: n.uuid } : {}),
    };
  }

  /** What the servers on the node, and the migrations heading there, hold. */
  usages(n: ComputeNode): Record<string, number> {
    const used = { VCPU: 0, MEMORY_MB: 0, DISK_GB: 0 };
    const add = (s: { vcpus: number; ramMb: number; diskGb: number; bootFromVolume: boolean }) => {
      used.VCPU += s.vcpus;
      used.MEMORY_MB += s.ramMb;
      used.DISK_GB += s.bootFromVolume ? 0 : s.diskGb;
    };
    for (const s of this.#model.servers.values()) if (s.host === n.serviceHost && !isDeleted(s)) add(s);
    for (const mig of this.#model.migrations) {
      if (mig.destCompute !== n.serviceHost || !HOLDING.has(mig.status)) continue;
      const s = this.#model.servers.get(mig.instanceUuid);
      if (s && s.host !== n.serviceHost) add(s);
    }
    return used;
  }
}

function inventories(n: ComputeNode): Record<string, unknown> {
  const inv = (total: number, reserved: number, ratio: number) => ({
    total,
    reserved,
    min_unit: 1,
    max_unit: total,
    step_size: 1,
    allocation_ratio: ratio,
  });
  return {
    VCPU: inv(n.vcpus, 0, RATIOS.VCPU),
    MEMORY_MB: inv(n.ramMb, RESERVED_RAM_MB, RATIOS.MEMORY_MB),
    DISK_GB: inv(n.diskGb, 0, RATIOS.DISK_GB),
  };
}

function versionHeaders(minor: number): Record<string, string> {
  return { 'openstack-api-version': `placement 1.${minor}`, vary: 'openstack-api-version' };
}

type Asked = { kind: 'ok'; major: number; minor: number; text: string } | { kind: 'bad'; text: string };

/** The requested version (1.0 when none asked for), or 'bad' for a malformed one. */
function negotiate(headers: IncomingHttpHeaders): Asked {
  const raw = headers['openstack-api-version'];
  const header = Array.isArray(raw) ? raw.join(',') : raw;
  for (const part of (header ?? '').split(',')) {
    const [service, version] = part.trim().split(/\s+/, 2);
    if (service?.toLowerCase() !== 'placement' || !version) continue;
    if (version.toLowerCase() === 'latest')
      return { kind: 'ok', major: 1, minor: PLACEMENT_MAX, text: version };
    const m = /^(\d+)\.(\d+)$/.exec(version);
    return m
      ? { kind: 'ok', major: Number(m[1]), minor: Number(m[2]), text: version }
      : { kind: 'bad', text: version };
  }
  return { kind: 'ok', major: 1, minor: 0, text: '1.0' };
}
