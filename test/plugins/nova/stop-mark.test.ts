// drainer's mark on a server it stops (metadata drainer.dev:stopped, issue 48), against the sandbox
// Nova on a clock 100× faster: set before the os-stop, stamped with the stop's request id once the
// server is off, and the memory of the stop wherever the server goes and whatever happens to the
// Node's record. The agent of the host where the server is starts it once that host is in
// service; an owner's later power action ends the claim, and the mark comes off.
import { afterEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../../src/errors.ts';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import { MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';
import { STOP_MARK_KEY, stopMarkOf } from '../../../src/plugins/nova/stop-mark.ts';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import { startOpenStack, type OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { nova as call, token, until } from '../../sandbox/openstack/client.ts';
import { sandboxDrainer, stopServer } from './sandbox-drainer.ts';

let cloud: OpenStackSandbox | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

const vm = stopServer;

async function owner(method: string, path: string, body?: unknown) {
  const res = await call(cloud!, method, path, { token: await token(cloud!), version: '2.93', body });
  if (res.status >= 300) throw new Error(`owner's ${path}: ${res.status}`);
}

const server = () => cloud!.state.server('vm-stop')!;
const idle = (status: string) => () => (server().status === status && !server().taskState ? true : undefined);
const mark = () => server().metadata[STOP_MARK_KEY];

/** Its owner's (or an operator's) resize or migrate of the stopped server, confirmed: Nova keeps it off. */
async function movedWhileOff(body: object) {
  await owner('POST', '/servers/vm-stop/action', body);
  await until(idle('VERIFY_RESIZE'), 'moved');
  await owner('POST', '/servers/vm-stop/action', { confirmResize: null });
  await until(idle('SHUTOFF'), 'confirmed, still off');
}

async function world(Compute: typeof ComputeClient = ComputeClient) {
  const clock = new ScaledClock(100);
  cloud = await startOpenStack({
    clock,
    hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
    servers: [vm()],
  });
  return {
    a: sandboxDrainer(cloud, clock, {}, Compute),
    b: sandboxDrainer(cloud, clock, {}, Compute, 'compute-b'),
  };
}

describe("drainer's stop mark", () => {
  it('is on the server before the os-stop, and names the stop by its request id once the evacuation is over', async () => {
    const { a } = await world();
    const stops = cloud!.state;
    await a.evacuate();
    const before = mark();

    const stop = (a.record()?.migrations as Record<string, { stopRequest?: string }>)['vm-stop']?.stopRequest;
    expect(stop).toMatch(/^req-/);
    expect(stopMarkOf({ metadata: { [STOP_MARK_KEY]: before! } })).toMatchObject({
      node: 'compute-a',
      trigger: 'cordon',
      request: stop,
    });
    expect(stops.server('vm-stop')?.status).toBe('SHUTOFF');
  });

  it('an uncordon right after the stop: the evacuation returns, the mark keeps its anchor, and restore starts the server', async () => {
    const uncordon = new AbortController();
    class UncordonAfterStop extends ComputeClient {
      override async stopServer(id: string, signal?: AbortSignal): Promise<string | undefined> {
        const request = await super.stopServer(id, signal);
        uncordon.abort(new CancelledError('uncordoned'));
        return request;
      }
    }
    const { a } = await world(UncordonAfterStop);

    const outcome = await a.evacuate({ signal: uncordon.signal });

    expect(outcome.plugin).toBe('nova');
    expect(stopMarkOf(server())).toMatchObject({ node: 'compute-a', after: expect.stringMatching(/^req-/) });
    await a.restore();
    await until(idle('ACTIVE'), 'started by the restore');
    expect(mark()).toBeUndefined();
  });

  it('a server drainer stopped, moved by its owner onto a host in maintenance: left stopped with its mark, and started by that host’s restore', async () => {
    const { a, b } = await world();
    await a.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');
    // its owner resizes it: Nova keeps it stopped, on compute-b, which then goes into maintenance
    await movedWhileOff({ resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await b.evacuate();
    expect(cloud!.state.service('compute-b')?.status).toBe('disabled');

    await a.restore();
    expect([server().host, server().status]).toEqual(['compute-b', 'SHUTOFF']);
    expect(mark()).toBeDefined();

    await b.restore();
    await until(idle('ACTIVE'), 'started by compute-b’s restore');
    expect(server().host).toBe('compute-b');
    expect(mark()).toBeUndefined();
  });

  it('a marked server another maintenance cold-moves onto a host in service: started where it lands, at once, while that maintenance goes on', async () => {
    const { a, b } = await world();
    await a.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');
    // an operator moves it onto compute-b, which goes into maintenance (the stopped server stays there)
    await movedWhileOff({ migrate: { host: 'compute-b' } });
    await b.evacuate();
    await a.restore(); // compute-a back in service; vm-stop left on compute-b with its mark
    expect(mark()).toBeDefined();

    // its owner now wants it moved cold: compute-b's next attempt moves it to compute-a, still off.
    // Nothing else would start it there: compute-a's restore is over, and compute-b's restore may
    // never come (its Node deleted, its record with it)
    await owner('PUT', `/servers/vm-stop/metadata/${MAINTENANCE_KEY}`, {
      meta: { [MAINTENANCE_KEY]: 'cold' },
    });
    await b.evacuate();

    expect([server().host, server().status, server().taskState]).toEqual(['compute-a', 'ACTIVE', null]);
    expect(mark()).toBeUndefined();
    expect(cloud!.state.service('compute-b')?.status).toBe('disabled');
    await b.restore();
    expect(server().status).toBe('ACTIVE');
  });

  it('a marked server cold-moved onto a host that went into maintenance meanwhile: left stopped with its mark, and started by that host’s restore', async () => {
    const clock = new ScaledClock(100);
    cloud = await startOpenStack({
      clock,
      hosts: [{ name: 'compute-a' }, { name: 'compute-b' }, { name: 'compute-c' }],
      servers: [vm({ host: 'compute-b', metadata: { [MAINTENANCE_KEY]: 'cold' } })],
    });
    // compute-c goes into maintenance while the move runs (its agent disables it, as a cordon does)
    class CInMaintenanceAtConfirm extends ComputeClient {
      override async confirmResize(id: string, signal?: AbortSignal): Promise<void> {
        const [svc] = await this.listServices('compute-c', signal);
        if (svc?.status === 'enabled') await this.disableService(svc, 'drainer: cordon', signal);
        return super.confirmResize(id, signal);
      }
    }
    const a = sandboxDrainer(cloud, clock, {});
    const b = sandboxDrainer(cloud, clock, {}, CInMaintenanceAtConfirm, 'compute-b');
    const c = sandboxDrainer(cloud, clock, {}, ComputeClient, 'compute-c');
    // stopped by a maintenance of compute-b's (its mark), then compute-a goes into maintenance
    await owner('PUT', `/servers/vm-stop/metadata/${STOP_MARK_KEY}`, {
      meta: { [STOP_MARK_KEY]: 'node=compute-x trigger=cordon' },
    });
    await owner('POST', '/servers/vm-stop/action', { 'os-stop': null });
    await until(idle('SHUTOFF'), 'stopped');
    await a.evacuate();

    await b.evacuate(); // the only host Nova can pick is compute-c

    expect([server().host, server().status]).toEqual(['compute-c', 'SHUTOFF']);
    expect(mark()).toBeDefined();
    await c.restore();
    await until(idle('ACTIVE'), 'started by compute-c’s restore');
    expect(server().host).toBe('compute-c');
    expect(mark()).toBeUndefined();
  });

  it('a forced restore that the agent’s next evacuation races: its new stop keeps its mark, and the host the server is moved to starts it', async () => {
    const clock = new ScaledClock(100);
    cloud = await startOpenStack({
      clock,
      hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
      servers: [vm()],
    });
    // the node is still cordoned: its agent evacuates again the moment the operator's restore has
    // started the server, and stops it again (a mark of its own) while the restore still follows it
    const agent = sandboxDrainer(cloud, clock);
    class AgentEvacuatesAgain extends ComputeClient {
      override async startServer(id: string, signal?: AbortSignal): Promise<string | undefined> {
        const request = await super.startServer(id, signal);
        await until(idle('ACTIVE'), 'started by the restore');
        agent.resumeFrom(undefined);
        await agent.evacuate();
        return request;
      }
    }
    const operator = sandboxDrainer(cloud, clock, {}, AgentEvacuatesAgain);
    await operator.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');

    await operator.restore();

    const again = (agent.record()?.migrations as Record<string, { stopRequest?: string }>)['vm-stop'];
    expect(server().status).toBe('SHUTOFF');
    expect(stopMarkOf(server())).toMatchObject({ request: again?.stopRequest });
    // its owner moves it (Nova keeps it off) onto compute-b, whose restore (no record) finds the mark
    await movedWhileOff({ migrate: { host: 'compute-b' } });
    await sandboxDrainer(cloud, clock, {}, ComputeClient, 'compute-b').restore();
    await until(idle('ACTIVE'), 'started by compute-b’s restore');
    expect(mark()).toBeUndefined();
  });

  it('a forced restore that reads the server between the agent’s new mark and its os-stop leaves that mark on', async () => {
    const { a } = await world();
    // the agent's next evacuation marks the server the restore just started (anchored on that
    // start), and its os-stop is still to come when the restore reads the server running
    class AgentMarksAfterStart extends ComputeClient {
      override async startServer(id: string, signal?: AbortSignal): Promise<string | undefined> {
        const request = await super.startServer(id, signal);
        await until(idle('ACTIVE'), 'started by the restore');
        await owner('PUT', `/servers/${id}/metadata/${STOP_MARK_KEY}`, {
          meta: { [STOP_MARK_KEY]: `node=compute-a trigger=cordon after=${request}` },
        });
        return request;
      }
    }
    await a.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');
    const operator = sandboxDrainer(cloud!, new ScaledClock(100), {}, AgentMarksAfterStart);
    operator.resumeFrom(a.record());

    await operator.restore();

    expect(server().status).toBe('ACTIVE');
    expect(stopMarkOf(server())).toMatchObject({ after: expect.stringMatching(/^req-/) });
  });

  it('the record lost: the stranded check starts a marked server once the node is in service, not before', async () => {
    const { a } = await world();
    await a.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');
    a.resumeFrom(undefined);

    expect(await a.stranded(false)).toMatchObject({
      what: expect.stringMatching(/vm-stop/),
      restored: false,
    });
    expect(server().status).toBe('SHUTOFF');

    expect(await a.stranded(true)).toMatchObject({ what: expect.stringMatching(/vm-stop/), restored: true });
    await until(idle('ACTIVE'), 'started');
    expect(mark()).toBeUndefined();
  });

  it.each([
    ['starts it', [{ 'os-start': null }], 'ACTIVE'],
    ['starts it and stops it again', [{ 'os-start': null }, { 'os-stop': null }], 'SHUTOFF'],
  ] as const)(
    'its owner %s after drainer’s stop: the claim ends, the mark comes off, nothing started',
    async (_w, acts, status) => {
      const { a } = await world();
      await a.evacuate();
      await until(idle('SHUTOFF'), 'stopped by drainer');
      for (const body of acts) {
        await owner('POST', '/servers/vm-stop/action', body);
        await until(idle('os-start' in body ? 'ACTIVE' : 'SHUTOFF'), 'owner’s action done');
      }
      a.resumeFrom(undefined); // the record lost: only the mark can tell

      await a.stranded(true);

      expect(server().status).toBe(status);
      expect(mark()).toBeUndefined();
    },
  );
});

describe('a record written by the previous version (stopped entries, no mark on the server)', () => {
  /** drainer's os-stop as the previous version made it: no mark; its request id in the record. */
  async function stoppedByOlderDrainer() {
    const res = await call(cloud!, 'POST', '/servers/vm-stop/action', {
      token: await token(cloud!),
      version: '2.93',
      body: { 'os-stop': null },
    });
    await until(idle('SHUTOFF'), 'stopped by the older drainer');
    // the record as the previous version wrote it (git show 18ab691~1: plugins/nova/record.ts)
    return {
      host: 'compute-a',
      serviceId: cloud!.state.service('compute-a')!.id,
      disabledByUs: false,
      reason: null,
      microversion: '2.93',
      migrations: {
        'vm-stop': {
          attempts: 0,
          startedAt: '',
          stopped: true,
          stopRequest: res.headers.get('x-openstack-request-id')!,
        },
      },
    };
  }

  it('a resumed evacuation marks the server it stopped, so the stop outlives the record', async () => {
    const { a } = await world();
    a.resumeFrom(await stoppedByOlderDrainer());
    expect(mark()).toBeUndefined();

    await a.evacuate();
    expect(stopMarkOf(server())).toMatchObject({
      node: 'compute-a',
      request: expect.stringMatching(/^req-/),
    });

    a.resumeFrom(undefined); // the Node deleted and registered again
    await a.stranded(true);
    await until(idle('ACTIVE'), 'started by the stranded check');
    expect(mark()).toBeUndefined();
  });

  it('its restore starts the server on the host; one moved onto a host in maintenance is marked there, and started by that host’s restore', async () => {
    const { a, b } = await world();
    const old = await stoppedByOlderDrainer();
    await movedWhileOff({ resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await b.evacuate();
    a.resumeFrom(old);

    await a.restore();
    expect([server().host, server().status]).toEqual(['compute-b', 'SHUTOFF']);
    expect(stopMarkOf(server())).toMatchObject({ request: old.migrations['vm-stop'].stopRequest });

    await b.restore();
    await until(idle('ACTIVE'), 'started by compute-b’s restore');
  });
});
