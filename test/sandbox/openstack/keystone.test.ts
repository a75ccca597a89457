import { afterEach, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import type { Clock } from '../../../src/sandbox/clock.ts';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { authenticate, nova, passwordAuth, start, token } from './client.ts';

/** A real-time clock whose "now" the test can move forward at once. */
class JumpClock implements Clock {
  readonly #inner = new ScaledClock(1);
  readonly scale = 1;
  #offset = 0;
  jump(ms: number): void {
    this.#offset += ms;
  }
  now(): number {
    return this.#inner.now() + this.#offset;
  }
  wallOf(simMs: number): number {
    return this.#inner.wallOf(simMs - this.#offset);
  }
  fromWall(wallMs: number): number {
    return this.#inner.fromWall(wallMs) + this.#offset;
  }
  after(ms: number, fn: () => void): () => void {
    return this.#inner.after(ms, fn);
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.#inner.sleep(ms, signal);
  }
}

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

describe('sandbox Keystone', () => {
  it('issues a project-scoped token in X-Subject-Token with a compute catalog for every interface', async () => {
    os = await start({ region: 'RegionTwo' });

    const res = await authenticate(os, passwordAuth('admin', 'secret'));

    expect(res.status).toBe(201);
    expect(res.headers.get('x-subject-token')).toMatch(/^gAAAAA/);
    expect(res.headers.get('x-openstack-request-id')).toMatch(/^req-/);
    expect(res.headers.get('vary')).toBe('X-Auth-Token');
    const t = res.body.token;
    expect(t.project).toMatchObject({ name: 'admin', domain: { id: 'default', name: 'Default' } });
    expect(t.roles.map((r: { name: string }) => r.name)).toContain('admin');
    expect(t.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000Z$/);
    const compute = t.catalog.find((c: { type: string }) => c.type === 'compute');
    expect(compute.endpoints.map((e: { interface: string }) => e.interface).sort()).toEqual([
      'admin',
      'internal',
      'public',
    ]);
    expect(
      compute.endpoints.every((e: { region_id: string; url: string }) => e.region_id === 'RegionTwo'),
    ).toBe(true);
    expect(compute.endpoints[0].url).toBe(os.computeUrl);
  });

  it('answers a wrong password with 401 in Keystone error shape', async () => {
    os = await start();

    const res = await authenticate(os, passwordAuth('admin', 'wrong'));

    expect(res.status).toBe(401);
    expect(res.headers.get('x-subject-token')).toBeNull();
    expect(res.headers.get('www-authenticate')).toBe(`Keystone uri="${os.identityUrl}"`);
    expect(res.body).toEqual({
      error: {
        code: 401,
        message: 'The request you have made requires authentication.',
        title: 'Unauthorized',
      },
    });
  });

  it('refuses to scope a user to a project where it has no role', async () => {
    os = await start();

    const res = await authenticate(os, passwordAuth('demo', 'secret', 'admin'));

    expect(res.status).toBe(401);
  });

  it('accepts an application credential by id, or by name and user, without a scope', async () => {
    os = await start();
    const ac = os.credentials.appCredential;

    const byId = await authenticate(os, {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { id: ac.id, secret: ac.secret },
        },
      },
    });
    const byName = await authenticate(os, {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: {
            name: ac.name,
            user: { name: 'admin', domain: { name: 'Default' } },
            secret: ac.secret,
          },
        },
      },
    });
    const withScope = await authenticate(os, {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { id: ac.id, secret: ac.secret },
        },
        scope: { project: { name: 'admin', domain: { id: 'default' } } },
      },
    });

    expect(byId.status).toBe(201);
    expect(byId.body.token.methods).toEqual(['application_credential']);
    expect(byId.body.token.application_credential.id).toBe(ac.id);
    expect(byName.status).toBe(201);
    expect(withScope.status).toBe(401);
  });

  it('creates application credentials for the calling user', async () => {
    os = await start();
    const t = await token(os);

    const res = await fetch(
      `${os.identityUrl}/users/${os.credentials.admin.userId}/application_credentials`,
      {
        method: 'POST',
        headers: { 'X-Auth-Token': t, 'Content-Type': 'application/json' },
        body: JSON.stringify({ application_credential: { name: 'mine' } }),
      },
    );
    const created = (await res.json()) as { application_credential: { id: string; secret: string } };
    const auth = await authenticate(os, {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: {
            id: created.application_credential.id,
            secret: created.application_credential.secret,
          },
        },
      },
    });

    expect(res.status).toBe(201);
    expect(auth.status).toBe(201);
  });

  it('lets tokens expire on the sandbox clock so Nova answers 401 until the client re-authenticates', async () => {
    const clock = new JumpClock();
    os = await start({ clock, tokenTtlSeconds: 600 });
    const old = await token(os);
    const before = await nova(os, 'GET', '/os-services', { token: old });

    clock.jump(600_000);
    const expired = await nova(os, 'GET', '/os-services', { token: old });
    const fresh = await token(os);

    expect(before.status).toBe(200);
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain(os.identityUrl);
    expect((await nova(os, 'GET', '/os-services', { token: fresh })).status).toBe(200);
  });
});
