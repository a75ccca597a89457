import { afterEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { nova, start, token, until } from './client.ts';

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

describe('sandbox Nova cold migration', () => {
  it('walks SHUTOFF → RESIZE → VERIFY_RESIZE on the new host, and back to SHUTOFF on confirmResize', async () => {
    os = await start({
      servers: [{ id: 'off', name: 'off', projectId: 'admin', host: 'compute-a', status: 'SHUTOFF' }],
      timings: { resizeFinishMs: 10_000 }, // a confirm that takes a while: room for a second one
    });
    const t = await token(os);
    const seen: string[] = [];
    os.state.subscribe((e) => {
      if (e.kind === 'server' && seen.at(-1) !== e.server.status) seen.push(e.server.status);
    });

    const res = await nova(os, 'POST', '/servers/off/action', {
      token: t,
      version: '2.93',
      body: { migrate: null },
    });
    await until(
      () => (os.state.server('off')?.status === 'VERIFY_RESIZE' ? true : undefined),
      'VERIFY_RESIZE',
    );
    const confirmAt = { token: t, version: '2.93', body: { confirmResize: null } };
    const confirm = await nova(os, 'POST', '/servers/off/action', confirmAt);
    // a second confirm while the first runs (the server still VERIFY_RESIZE): Nova finds no `finished` record
    const second = await nova(os, 'POST', '/servers/off/action', confirmAt);
    await until(() => (os.state.server('off')?.status === 'SHUTOFF' ? true : undefined), 'SHUTOFF');

    expect(res.status).toBe(202);
    expect(confirm.status).toBe(204);
    expect(second.status).toBe(400);
    expect(second.body.badRequest.message).toBe('Instance has not been resized.');
    expect(seen).toEqual(['RESIZE', 'VERIFY_RESIZE', 'SHUTOFF']);
    expect(os.state.server('off')?.host).toBe('compute-b');
    expect(os.state.migrations('off').map((m) => [m.type, m.status])).toEqual([['migration', 'confirmed']]);
  });

  it('refuses confirmResize with 409 unless the server is VERIFY_RESIZE', async () => {
    os = await start({ servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }] });
    const t = await token(os);

    const res = await nova(os, 'POST', '/servers/s1/action', { token: t, body: { confirmResize: null } });

    expect(res.status).toBe(409);
    expect(res.body.conflictingRequest.message).toBe(
      "Cannot 'confirmResize' instance s1 while it is in vm_state active",
    );
  });

  it('puts the server back on its source host on revertResize', async () => {
    os = await start({ servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }] });
    const t = await token(os);

    await nova(os, 'POST', '/servers/s1/action', { token: t, body: { migrate: null } });
    await until(
      () => (os.state.server('s1')?.status === 'VERIFY_RESIZE' ? true : undefined),
      'VERIFY_RESIZE',
    );
    const revert = await nova(os, 'POST', '/servers/s1/action', { token: t, body: { revertResize: null } });
    await until(() => (os.state.server('s1')?.status === 'ACTIVE' ? true : undefined), 'ACTIVE');

    expect(revert.status).toBe(202);
    expect(os.state.server('s1')?.host).toBe('compute-a');
  });

  it('accepts a target host from 2.56 and answers 400 for an unknown one', async () => {
    os = await start({ servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }] });
    const t = await token(os);

    const old = await nova(os, 'POST', '/servers/s1/action', {
      token: t,
      version: '2.55',
      body: { migrate: { host: 'compute-b' } },
    });
    const unknown = await nova(os, 'POST', '/servers/s1/action', {
      token: t,
      version: '2.56',
      body: { migrate: { host: 'nohost' } },
    });

    expect(old.status).toBe(400);
    expect(unknown.status).toBe(400);
    expect(unknown.body.badRequest.message).toBe('Compute host nohost could not be found.');
  });
});
