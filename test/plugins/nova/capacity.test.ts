// The Nova capacity verdict against the sandbox Keystone + Nova + Placement on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { novaSchema, openstackSchema } from '../../../src/config/schema.ts';
import { TransientError } from '../../../src/errors.ts';
import type { Plan } from '../../../src/core/backends/plugin.ts';
import { longestChain, type TimedRequest } from '../../../bench/lib/request-chain.ts';
import { createLogger } from '../../../src/observability/logger.ts';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import { createHttp, type Http } from '../../../src/plugins/nova/http.ts';
import { KeystoneSession } from '../../../src/plugins/nova/keystone.ts';
import { PlacementClient } from '../../../src/plugins/nova/placement.ts';
import { NovaPlugin } from '../../../src/plugins/nova/plugin.ts';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import { openstackConfigFor } from '../../../src/sandbox/scenario-config.ts';
import {
  startOpenStack,
  type HostSpec,
  type OpenStackSandbox,
  type ServerSpec,
  type StartOpenStackOptions,
} from '../../../src/sandbox/openstack/index.ts';

let cloud: OpenStackSandbox | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

const GiB = 1024;
const vm = (name: string, vcpus: number, ramGb: number, extra: Partial<ServerSpec> = {}): ServerSpec => ({
  name,
  projectId: 'demo',
  host: 'compute-a',
  vcpus,
  ramMb: ramGb * GiB,
  diskGb: 20,
  ...extra,
});
// 16 cores ×4 = 64 vCPU, max_unit 16; 64 GiB RAM minus 512 MB reserved
const host = (name: string, extra: Partial<HostSpec> = {}): HostSpec => ({
  name,
  vcpus: 16,
  ramMb: 64 * GiB,
  diskGb: 500,
  ...extra,
});

async function planOf(
  opts: Partial<StartOpenStackOptions> & { servers: ServerSpec[] },
  wrap: (http: Http) => Http = (h) => h,
): Promise<Plan> {
  cloud = await startOpenStack({
    clock: new ScaledClock(50),
    hosts: [host('compute-a', { vcpus: 32, ramMb: 256 * GiB }), host('compute-b')],
    ...opts,
  });
  const openstack = openstackSchema.parse(openstackConfigFor(cloud));
  const http = wrap(createHttp({ timeoutMs: 5000, retries: 0 }));
  const session = new KeystoneSession({ openstack, http });
  const compute = new ComputeClient({ http, session, maxMicroversion: opts.maxMicroversion });
  const plugin = new NovaPlugin({
    compute,
    placement: new PlacementClient({ http, session }),
    nova: novaSchema.parse({}),
    log: createLogger({ level: 'silent' }),
    sleep: async () => {},
    now: Date.now,
  });
  return plugin.plan({ name: 'compute-a' }, new AbortController().signal, { capacity: true });
}

describe('nova capacity verdict', () => {
  it('fits: every server has room on the other host', async () => {
    const plan = await planOf({ servers: [vm('web-1', 2, 4), vm('web-2', 2, 4)] });
    expect(plan.capacity).toEqual({ status: 'fits', message: 'nova: all 2 servers fit on 1 other host' });
  });

  it('short: names the server that fits nowhere, what it needs, and the total shortfall', async () => {
    const plan = await planOf({ servers: [vm('db-7', 16, 48), vm('db-8', 8, 16), vm('web-1', 2, 4)] });
    expect(plan.capacity).toEqual({
      status: 'short',
      message:
        'nova: 1 of 3 servers does not fit: db-8 (8 vCPU, 16 GiB RAM, 20 GB disk): the largest room on one other host is 15.5 GiB RAM; 4.5 GiB RAM short in total',
    });
  });

  it('max_unit: a server wider than any other host’s cores does not fit, however much room', async () => {
    const plan = await planOf({ servers: [vm('wide', 24, 8)] });
    expect(plan.capacity?.message).toBe(
      'nova: 1 of 1 server does not fit: wide (24 vCPU, 8 GiB RAM, 20 GB disk) is larger than any other host takes for one workload (at most 16 vCPU)',
    );
  });

  it('a disabled host is no destination', async () => {
    const plan = await planOf({
      hosts: [host('compute-a'), host('compute-b', { disabled: { reason: 'maintenance' } })],
      servers: [vm('web-1', 1, 1)],
    });
    expect(plan.capacity).toMatchObject({
      status: 'short',
      message: expect.stringContaining('web-1 (1 vCPU, 1 GiB RAM, 20 GB disk): no other host can take it'),
    });
  });

  it('boot-from-volume servers need no disk on the destination', async () => {
    const plan = await planOf({
      hosts: [host('compute-a', { diskGb: 2000 }), host('compute-b', { diskGb: 250 })],
      servers: [
        vm('bfv', 2, 4, { bootFromVolume: true, diskGb: 200 }),
        vm('local', 2, 4, { diskGb: 200 }),
        vm('resident', 1, 1, { host: 'compute-b', diskGb: 100 }),
      ],
    });
    expect(plan.capacity?.message).toBe(
      'nova: 1 of 2 servers does not fit: local (2 vCPU, 4 GiB RAM, 200 GB disk): the largest room on one other host is 150 GB disk; 50 GB disk short in total',
    );
  });

  it('anti-affinity: two members cannot share the one other host', async () => {
    const plan = await planOf({
      servers: [vm('db-1', 2, 4), vm('db-2', 2, 4)],
      serverGroups: [{ name: 'db', policy: 'anti-affinity', members: ['db-1', 'db-2'], projectId: 'demo' }],
    });
    expect(plan.capacity?.message).toMatch(
      /does not fit: db-\d .* is in anti-affinity group .* every usable host already holds a member/,
    );
  });

  it('anti-affinity before 2.64 (policies) binds the same way; soft anti-affinity does not', async () => {
    const hard = await planOf({
      maxMicroversion: '2.60',
      servers: [vm('db-1', 2, 4), vm('db-2', 2, 4)],
      serverGroups: [{ name: 'db', policy: 'anti-affinity', members: ['db-1', 'db-2'], projectId: 'demo' }],
    });
    expect(hard.capacity?.status).toBe('short');
    await cloud?.close();
    const soft = await planOf({
      servers: [vm('db-1', 2, 4), vm('db-2', 2, 4)],
      serverGroups: [
        { name: 'db', policy: 'soft-anti-affinity', members: ['db-1', 'db-2'], projectId: 'demo' },
      ],
    });
    expect(soft.capacity?.status).toBe('fits');
  });

  it('before 2.47 reads the flavors through the flavors API', async () => {
    const plan = await planOf({ maxMicroversion: '2.46', servers: [vm('wide', 24, 8)] });
    expect(plan.capacity?.message).toContain('wide (24 vCPU, 8 GiB RAM, 20 GB disk)');
  });

  it('without Placement in the catalog: unknown, unsupported (the core treats it as warn)', async () => {
    const plan = await planOf({ placement: false, servers: [vm('web-1', 1, 1)] });
    expect(plan.capacity).toMatchObject({ status: 'unknown', reason: 'unsupported' });
  });

  it('Placement failing: unknown, unavailable, with the error', async () => {
    const broken = (inner: Http): Http => ({
      request: (req) =>
        req.api === 'placement'
          ? Promise.reject(
              new TransientError('placement GET /resource_providers → 503', {
                api: 'placement',
                status: 503,
              }),
            )
          : inner.request(req),
    });
    const plan = await planOf({ servers: [vm('web-1', 1, 1)] }, broken);
    expect(plan.capacity).toEqual({
      status: 'unknown',
      reason: 'unavailable',
      message: 'placement GET /resource_providers → 503',
    });
  });
  it('reads side by side: after the host listing the verdict waits for at most 3 answers in a row', async () => {
    // a tick per start and per end: "started after that one ended" without a clock
    let tick = 0;
    const seen: (TimedRequest & { what: string })[] = [];
    const traced = (inner: Http): Http => ({
      request: async (req) => {
        const entry = { what: `${req.method} ${new URL(req.url).pathname}`, start: ++tick, end: Infinity };
        seen.push(entry);
        try {
          return await inner.request(req);
        } finally {
          entry.end = ++tick;
        }
      },
    });
    // before 2.47 the flavors are separate reads, and a group member elsewhere is one more
    const plan = await planOf(
      {
        maxMicroversion: '2.46',
        hosts: [host('compute-a'), host('compute-b'), host('compute-c')],
        servers: [vm('db-1', 2, 4), vm('web-1', 4, 8), vm('db-2', 2, 4, { host: 'compute-b' })],
        serverGroups: [{ name: 'db', policy: 'anti-affinity', members: ['db-1', 'db-2'], projectId: 'demo' }],
      },
      traced,
    );
    expect(plan.capacity?.status).toBe('fits');
    const listing = seen.findLast((r) => r.what.endsWith('/servers/detail'));
    const check = seen.filter((r) => listing && r.start > listing.end);
    expect(check.map((r) => r.what)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/os-services$/),
        expect.stringMatching(/\/flavors\//),
        expect.stringMatching(/\/os-server-groups$/),
        expect.stringMatching(/\/servers\/[0-9a-f-]+$/),
        expect.stringMatching(/\/os-hypervisors\/detail$/),
        expect.stringMatching(/\/resource_providers$/),
        expect.stringMatching(/\/inventories$/),
        expect.stringMatching(/\/usages$/),
      ]),
    );
    // one after the other this was 6 (services, flavors, groups, member, providers, inventories and usages)
    expect(longestChain(check)).toBeLessThanOrEqual(3);
  });
});
