import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { AuthError, ConfigError } from '../../../src/errors.ts';
import { createHttp } from '../../../src/plugins/nova/http.ts';
import { KeystoneSession, findEndpoint, identityBase } from '../../../src/plugins/nova/keystone.ts';
import { FakeClock, offlineNock, openstackConfig } from './helpers.ts';

const KS = 'http://keystone.test';

function tokenReply(opts: { token?: string; ttlMs?: number; now?: number; catalog?: unknown[] } = {}) {
  const now = opts.now ?? Date.now();
  return [
    201,
    {
      token: {
        issued_at: new Date(now).toISOString(),
        expires_at: new Date(now + (opts.ttlMs ?? 3_600_000)).toISOString(),
        catalog: opts.catalog ?? [
          {
            type: 'compute',
            endpoints: [{ interface: 'public', region_id: 'RegionOne', url: 'http://nova.test/v2.1' }],
          },
        ],
      },
    },
    { 'x-subject-token': opts.token ?? 'tok-1' },
  ] as const;
}

function session(overrides: Record<string, unknown> = {}, clock = new FakeClock()) {
  const http = createHttp({ timeoutMs: 5000, sleep: clock.sleep });
  return new KeystoneSession({ openstack: openstackConfig(overrides), http, now: clock.now });
}

offlineNock();

describe('keystone auth', () => {
  it('authenticates with a password, scoped to the project, and reads the token from X-Subject-Token', async () => {
    let sent: { auth: { identity: unknown; scope?: unknown } } | undefined;
    nock(KS)
      .post('/v3/auth/tokens', (b: typeof sent) => ((sent = b), true))
      .reply(...tokenReply({ token: 'tok-pw' }));

    expect(await session().token()).toBe('tok-pw');
    expect(sent?.auth.identity).toEqual({
      methods: ['password'],
      password: { user: { name: 'admin', domain: { name: 'Default' }, password: expect.any(String) } },
    });
    expect(sent?.auth.scope).toEqual({ project: { name: 'admin', domain: { name: 'Default' } } });
  });

  it('authenticates with an application credential and sends no scope', async () => {
    let sent: { auth: { identity: unknown; scope?: unknown } } | undefined;
    nock(KS)
      .post('/v3/auth/tokens', (b: typeof sent) => ((sent = b), true))
      .reply(...tokenReply({ token: 'tok-ac' }));
    const s = session({
      auth: { authUrl: `${KS}/v3/`, applicationCredentialId: 'ac-1', applicationCredentialSecret: 'shh' },
    });

    expect(await s.token()).toBe('tok-ac');
    expect(sent).toEqual({
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { id: 'ac-1', secret: 'shh' },
        },
      },
    });
  });

  it('accepts an auth URL with or without /v3', () => {
    expect(identityBase('http://k:5000')).toBe('http://k:5000/v3');
    expect(identityBase('http://k:5000/v3/')).toBe('http://k:5000/v3');
    expect(identityBase('http://k/identity/v3')).toBe('http://k/identity/v3');
  });

  it('names the missing key when the credentials are incomplete', async () => {
    const s = session({ auth: { authUrl: `${KS}/v3`, username: 'admin' } });
    const err = await s.token().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toEqual([
      'openstack.auth.password',
      'openstack.auth.projectName',
    ]);
  });

  it('turns rejected credentials into an AuthError', async () => {
    nock(KS)
      .post('/v3/auth/tokens')
      .reply(401, { error: { code: 401, message: 'The request you have made requires authentication.' } });
    await expect(session().token()).rejects.toBeInstanceOf(AuthError);
  });

  it('caches the token and renews it before expires_at', async () => {
    const clock = new FakeClock();
    nock(KS)
      .post('/v3/auth/tokens')
      .reply(...tokenReply({ token: 'tok-1', now: clock.t, ttlMs: 3_600_000 }));
    const s = session({}, clock);
    expect(await s.token()).toBe('tok-1');
    clock.t += 50 * 60_000; // 10 minutes left: still fine
    expect(await s.token()).toBe('tok-1');

    clock.t += 6 * 60_000; // 4 minutes left: inside the 5-minute margin
    nock(KS)
      .post('/v3/auth/tokens')
      .reply(...tokenReply({ token: 'tok-2', now: clock.t }));
    expect(await s.token()).toBe('tok-2');
  });

  it('re-authenticates once on a 401, then gives up with an AuthError', async () => {
    nock(KS)
      .post('/v3/auth/tokens')
      .times(2)
      .reply(...tokenReply());
    const s = session();
    const seen: string[] = [];
    const fn = async (token: string) => {
      seen.push(token);
      throw new AuthError('nova said 401', { api: 'nova', status: 401 });
    };

    const err = await s.withAuth(fn).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).message).toMatch(/freshly issued token/);
    expect(seen).toHaveLength(2);
    expect(nock.isDone()).toBe(true);
  });

  it('succeeds when the re-issued token works', async () => {
    nock(KS)
      .post('/v3/auth/tokens')
      .reply(...tokenReply({ token: 'old' }));
    nock(KS)
      .post('/v3/auth/tokens')
      .reply(...tokenReply({ token: 'new' }));
    const s = session();
    const result = await s.withAuth(async (token) => {
      if (token === 'old') throw new AuthError('expired', { api: 'nova', status: 401 });
      return `ok with ${token}`;
    });
    expect(result).toBe('ok with new');
  });
});

describe('catalog', () => {
  const ep = (iface: string, region: string, url: string) => ({ interface: iface, region_id: region, url });
  const catalog = [
    { type: 'identity', endpoints: [ep('public', 'R1', 'http://ks')] },
    {
      type: 'compute',
      endpoints: [
        ep('public', 'R1', 'http://nova-r1-pub/v2.1'),
        ep('internal', 'R1', 'http://nova-r1-int/v2.1'),
        ep('public', 'R2', 'http://nova-r2-pub/v2.1'),
      ],
    },
  ];

  it('picks the compute endpoint by interface and region', () => {
    expect(findEndpoint(catalog, 'compute', 'internal', 'R1')).toBe('http://nova-r1-int/v2.1');
    expect(findEndpoint(catalog, 'compute', 'public', 'R2')).toBe('http://nova-r2-pub/v2.1');
  });

  it('asks for a region when several endpoints match', () => {
    const err = (() => {
      try {
        findEndpoint(catalog, 'compute', 'public', undefined);
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err?.issues[0]?.path).toBe('openstack.regionName');
    expect(err?.message).toMatch(/2 "compute" endpoints match/);
  });

  it('says what the catalog offers when nothing matches', () => {
    expect(() => findEndpoint(catalog, 'compute', 'admin', 'R1')).toThrow(
      /public@R1, internal@R1, public@R2/,
    );
    expect(() => findEndpoint(catalog, 'volumev3', 'public', 'R1')).toThrow(/no "volumev3" service/);
  });

  it('uses the token catalog for the session endpoint', async () => {
    nock(KS)
      .post('/v3/auth/tokens')
      .reply(...tokenReply({ catalog }));
    const s = session({ regionName: 'R1', interface: 'internal' });
    expect(await s.endpoint('compute')).toBe('http://nova-r1-int/v2.1');
  });
});
