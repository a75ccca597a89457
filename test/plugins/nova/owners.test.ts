// Servers have owners who act at any moment, and Nova takes its time (the sandbox Nova, on a clock
// 100× faster): the owner's stop, shelve and delete mid-evacuation are the owner's, never drainer's
// failure, and restore starts only what drainer itself stopped.
import { describe, expect, it } from 'vitest';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import { MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';
import { STOP_MARK_KEY } from '../../../src/plugins/nova/stop-mark.ts';
import type { ServerSpec } from '../../../src/sandbox/openstack/index.ts';
import { nova as call, token, until } from '../../sandbox/openstack/client.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';
import { line, onComputeA, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();
const server = onComputeA;
const way = (w: string) => ({ metadata: { [MAINTENANCE_KEY]: w } });

/** The owner's call, through Nova's API like any owner's (the admin token: any project). */
const owner = sb.asAdmin;

/**
 * drainer's Nova plugin against the sandbox, on the sandbox's clock. `Compute` lets a test put an
 * owner's action right before one of drainer's calls (the race, made certain).
 */
async function drainer(
  servers: ServerSpec[],
  config: Record<string, unknown> = {},
  Compute: typeof ComputeClient = ComputeClient,
) {
  // the scheduler takes 5 s (Nova's takes 0.5 to 1.5): an owner's move is still in flight when drainer acts
  const clock = await sb.start({
    hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
    servers,
    timings: { scheduleMs: 5000 },
  });
  return sandboxDrainer(sb.cloud, clock, config, Compute);
}

/** drainer has asked the server's owner (way out notify): its clock is in the record. */
const asked = (d: Awaited<ReturnType<typeof drainer>>, id: string) =>
  until(() => {
    const m = d.record()?.migrations as Record<string, { notifiedAt?: string }> | undefined;
    return m?.[id]?.notifiedAt ? true : undefined;
  }, `${id} asked`);

describe('an owner who acts mid-evacuation (sandbox Nova)', () => {
  it('the owner stops a `stop` server first: Nova refuses drainer’s os-stop (409), and restore does not start it', async () => {
    // the owner's os-stop lands between drainer's listing (ACTIVE, idle) and drainer's os-stop
    class OwnerStopsFirst extends ComputeClient {
      override async stopServer(id: string, signal?: AbortSignal): Promise<string | undefined> {
        await owner('POST', `/servers/${id}/action`, { 'os-stop': null });
        return super.stopServer(id, signal);
      }
    }
    const d = await drainer([server('vm-stop', way('stop'))], {}, OwnerStopsFirst);

    const outcome = await d.evacuate();
    const entry = (d.record()?.migrations as Record<string, { stopped?: boolean }>)['vm-stop'];
    await d.restore();

    expect(outcome.succeeded).toBe(true);
    expect(line(outcome, 'vm-stop')).toMatchObject({ state: 'skipped', action: 'skip' });
    expect(entry?.stopped).not.toBe(true);
    expect(sb.cloud.state.server('vm-stop')?.status).toBe('SHUTOFF'); // as its owner left it
  });

  it('drainer’s own stop is started again on restore, once Nova has powered it off', async () => {
    const d = await drainer([server('vm-stop', way('stop'))]);

    const outcome = await d.evacuate();
    await d.restore();

    expect(line(outcome, 'vm-stop')).toMatchObject({
      state: 'skipped',
      action: 'stop',
      message: expect.stringMatching(/stopped on the host for the declared reboot/),
    });
    expect(sb.cloud.state.server('vm-stop')?.status).toBe('ACTIVE');
  });

  it('the owner resizes a server drainer stopped: Nova keeps it SHUTOFF on its new host, and restore starts it there', async () => {
    // resizing is not asking for it to stay off: drainer's stop is still its newest power action
    const d = await drainer([server('vm-stop', { ...way('stop'), ramMb: 2048, vcpus: 1, diskGb: 10 })]);
    const idle = (status: string) => () => {
      const s = sb.cloud.state.server('vm-stop');
      return s?.status === status && !s.taskState ? true : undefined;
    };

    await d.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');
    await owner('POST', '/servers/vm-stop/action', { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await until(idle('VERIFY_RESIZE'), 'resized');
    await owner('POST', '/servers/vm-stop/action', { confirmResize: null });
    await until(idle('SHUTOFF'), 'confirmed, still off');
    await d.restore();

    expect(sb.cloud.state.server('vm-stop')).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });

  it('the owner starts a server drainer stopped and stops it again: their stop, restore leaves it off', async () => {
    const d = await drainer([server('vm-stop', way('stop'))]);
    const idle = (status: string) => () => {
      const s = sb.cloud.state.server('vm-stop');
      return s?.status === status && !s.taskState ? true : undefined;
    };

    await d.evacuate();
    await until(idle('SHUTOFF'), 'stopped by drainer');
    await owner('POST', '/servers/vm-stop/action', { 'os-start': null });
    await until(idle('ACTIVE'), 'started by its owner');
    await owner('POST', '/servers/vm-stop/action', { 'os-stop': null });
    await until(idle('SHUTOFF'), 'stopped by its owner');
    await d.restore();

    expect(sb.cloud.state.server('vm-stop')).toMatchObject({ host: 'compute-a', status: 'SHUTOFF' });
    // their stop ended drainer's claim: its mark is off, so no later look starts it either
    expect(sb.cloud.state.server('vm-stop')?.metadata).not.toHaveProperty([STOP_MARK_KEY]);
  });

  it('the owner starts a server drainer stopped before the listing that ends the evacuation: it is stopped again, never left running', async () => {
    // chaos seed 2 round 6: the run ended on that listing with the server running on the host, and
    // the gate opened for a drain of a host about to reboot
    const idle = (status: string) => () => {
      const s = sb.cloud.state.server('vm-stop');
      return s?.status === status && !s.taskState ? true : undefined;
    };
    let startedByOwner = false;
    class OwnerStartsBeforeTheLastListing extends ComputeClient {
      override async listServersOnHost(...args: Parameters<ComputeClient['listServersOnHost']>) {
        if (!startedByOwner && idle('SHUTOFF')()) {
          startedByOwner = true;
          await owner('POST', '/servers/vm-stop/action', { 'os-start': null });
          await until(idle('ACTIVE'), 'started by its owner');
        }
        return super.listServersOnHost(...args);
      }
    }
    const d = await drainer([server('vm-stop', way('stop'))], {}, OwnerStartsBeforeTheLastListing);

    const outcome = await d.evacuate();

    expect(startedByOwner).toBe(true);
    expect(line(outcome, 'vm-stop')).toMatchObject({ state: 'skipped', action: 'stop' });
    expect(sb.cloud.state.server('vm-stop')).toMatchObject({ host: 'compute-a', status: 'SHUTOFF' });
  });

  it('the owner shelves a server while drainer waits for them (notify): it left the host, counted moved, not failed', async () => {
    const d = await drainer([server('vm-ask', way('notify'))], { notifyTimeout: 600 });

    const run = d.evacuate();
    await asked(d, 'vm-ask');
    await owner('POST', '/servers/vm-ask/action', { shelve: null });
    const outcome = await run;

    expect(sb.cloud.state.server('vm-ask')).toMatchObject({ status: 'SHELVED_OFFLOADED', host: '' });
    expect(outcome.succeeded).toBe(true);
    expect(line(outcome, 'vm-ask')).toMatchObject({
      state: 'succeeded',
      message: 'shelved by its owner: offloaded, it left the host',
    });
    expect(outcome.message).not.toMatch(/host unknown|admin role/);
  });

  it('the owner deletes a server while drainer live-migrates it: skipped as deleted, not failed', async () => {
    const d = await drainer([server('vm-big', { migrationMs: 3_600_000 }), server('vm-small')]);

    const run = d.evacuate();
    await until(
      () => (sb.cloud.state.migrations('vm-big')[0]?.status === 'running' ? true : undefined),
      'vm-big migrating',
    );
    await owner('DELETE', '/servers/vm-big');
    const outcome = await run;

    expect(outcome.succeeded).toBe(true);
    expect(line(outcome, 'vm-big')).toMatchObject({
      state: 'skipped',
      message: expect.stringMatching(/^deleted during the evacuation/),
    });
    expect(line(outcome, 'vm-small')?.state).toBe('succeeded');
  });

  /** The owner's resize lands between drainer's listing (idle) and drainer's first live-migrate (409). */
  const ownerResizesFirst = (flavorRef: string) => {
    let done = false;
    return class extends ComputeClient {
      override async liveMigrate(id: string, signal?: AbortSignal): Promise<string | undefined> {
        if (!done) await owner('POST', `/servers/${id}/action`, { resize: { flavorRef } });
        done = true;
        return super.liveMigrate(id, signal);
      }
    };
  };

  it('the owner resizes it to another host first: drainer follows their resize, counts it moved by them and leaves the confirm to them', async () => {
    const d = await drainer(
      [server('vm', { migrationMs: 60_000 })],
      {},
      ownerResizesFirst('flavor-c2-r4096-d10'),
    );

    const outcome = await d.evacuate();

    expect(outcome.succeeded).toBe(true);
    expect(line(outcome, 'vm')).toMatchObject({
      state: 'succeeded',
      attempts: 0,
      message: 'resized or migrated off the host by someone else (the confirm is theirs)',
    });
    expect(sb.cloud.state.server('vm')).toMatchObject({ host: 'compute-b', status: 'VERIFY_RESIZE' });
  });

  it('the owner’s resize has landed elsewhere before drainer’s live-migrate (409, vm_state resized): moved by them, not drainer’s failure', async () => {
    let done = false;
    class ResizedFirst extends ComputeClient {
      override async liveMigrate(id: string, signal?: AbortSignal): Promise<string | undefined> {
        if (!done) {
          done = true;
          await owner('POST', `/servers/${id}/action`, { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
          await until(
            () => (sb.cloud.state.server(id)?.status === 'VERIFY_RESIZE' ? true : undefined),
            'landed',
          );
        }
        return super.liveMigrate(id, signal);
      }
    }
    const d = await drainer([server('vm', { migrationMs: 1_000 })], { retries: 0 }, ResizedFirst);

    const outcome = await d.evacuate();

    expect(outcome.succeeded).toBe(true);
    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', attempts: 0 });
    expect(sb.cloud.state.server('vm')).toMatchObject({ host: 'compute-b', status: 'VERIFY_RESIZE' });
  });

  it('the owner’s resize finds no room and ends on the host: no failed attempt of drainer’s; drainer moves it itself', async () => {
    const d = await drainer([server('vm')], { retries: 0 }, ownerResizesFirst('flavor-c2-r999999-d10'));

    const outcome = await d.evacuate();

    expect(outcome.succeeded).toBe(true);
    expect(line(outcome, 'vm')).toMatchObject({ state: 'succeeded', action: 'live-migrate', attempts: 1 });
    // the server runs on compute-b; its record ends after Nova's post-migration on the source
    await until(
      () => sb.cloud.state.migrations('vm').at(-1)?.status !== 'running' || undefined,
      'record ended',
    );
    expect(sb.cloud.state.migrations('vm').map((m) => [m.type, m.status])).toEqual([
      ['resize', 'error'],
      ['live-migration', 'completed'],
    ]);
  });

  it('the owner’s resize into the host was scheduled before the host was disabled: the evacuation waits for it to land and moves it too', async () => {
    // vm-in lives on compute-b; its owner resizes it while compute-a (the only other host) is enabled
    const d = await drainer([server('vm-a'), server('vm-in', { host: 'compute-b', migrationMs: 60_000 })]);
    await owner('POST', '/servers/vm-in/action', { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await until(
      () => (sb.cloud.state.migrations('vm-in')[0]?.status === 'migrating' ? true : undefined),
      'vm-in on its way to compute-a',
    );
    // its owner confirms once it has landed, as owners do; drainer, finding it waiting on the host, may
    // confirm first, and Nova then answers the owner's 400 "Instance has not been resized."
    const confirmed = until(async () => {
      // drainer confirmed it between two looks (a loaded machine): nothing is left for the owner to do
      const resize = sb.cloud.state.migrations('vm-in').find((m) => m.type === 'resize');
      if (resize?.status === 'confirmed') return true;
      if (sb.cloud.state.server('vm-in')?.status !== 'VERIFY_RESIZE') return undefined;
      const res = await call(sb.cloud, 'POST', '/servers/vm-in/action', {
        token: await token(sb.cloud),
        version: '2.93',
        body: { confirmResize: null },
      });
      return [204, 400].includes(res.status) || undefined;
    }, 'vm-in landed');

    const outcome = await d.evacuate();
    const leftOnHost = sb.cloud.state.serversOnHost('compute-a').map((s) => s.name);
    await confirmed;

    expect(outcome.succeeded).toBe(true);
    expect(leftOnHost).toEqual([]);
    expect(line(outcome, 'vm-in')?.state).toBe('succeeded');
    expect(sb.cloud.state.server('vm-in')?.host).toBe('compute-b');
  });
});
