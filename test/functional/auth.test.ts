// Authentication as operators configure it: password and application credential from clouds.yaml,
// a token Nova rejects mid-run (re-auth and carry on), and a non-admin user told what is missing.
import { describe, expect, it } from 'vitest';
import { tail } from './support/cli.ts';
import { useCli } from './support/cli-world.ts';
import { createAppCredential, createUser, grantRole, roleId } from './support/identity.ts';
import { startKeystoneProxy } from './support/keystone-proxy.ts';
import { computeService, getServer } from './support/nova.ts';
import { uniqueName } from './support/run-id.ts';
import { http } from './support/session.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();
const cli = useCli(world);

describe('authentication against a real Keystone', () => {
  it('authenticates with a password from clouds.yaml', async () => {
    const w = world();

    const run = await cli().drainer(['plan', '--node', w.settings.sourceHost]);

    expect(run.code, tail(run)).toBe(0);
  });

  it('evacuates with an application credential (unscoped auth) created for the test', async () => {
    const w = world();
    const [server] = await w.boot([{ label: 'auth-appcred' }]);
    const ac = await createAppCredential(w.admin, w.cleanup, uniqueName('appcred'));
    await cli().addCloud('drainer-ft-appcred', {
      ...w.cloud,
      auth: {
        authUrl: w.cloud.auth.authUrl,
        applicationCredentialId: ac.id,
        applicationCredentialSecret: ac.secret,
      },
    });

    const run = await cli().drainer(['run-once', '--node', w.settings.sourceHost], {
      cloud: 'drainer-ft-appcred',
    });

    expect(run.code, tail(run)).toBe(0);
    expect((await getServer(w.admin, server!.id))?.host).toBe(w.settings.targetHost);
    expect(run.output).not.toContain(ac.secret);
  });

  it('re-authenticates when Nova rejects its token with 401 and finishes the evacuation', async () => {
    const w = world();
    const [server] = await w.boot([{ label: 'auth-revoked' }]);
    const proxy = await startKeystoneProxy(w.admin, 1);
    w.cleanup.add('keystone proxy', () => proxy.close());
    await cli().addCloud('drainer-ft-revoked', {
      ...w.cloud,
      auth: { ...w.cloud.auth, authUrl: proxy.authUrl },
    });

    const run = await cli().drainer(['run-once', '--node', w.settings.sourceHost], {
      cloud: 'drainer-ft-revoked',
    });

    expect(run.code, tail(run)).toBe(0);
    expect((await getServer(w.admin, server!.id))?.host).toBe(w.settings.targetHost);
    expect(proxy.issued.length).toBeGreaterThanOrEqual(2);
    const rejected = await http.get(`${w.admin.endpoint('compute')}/flavors`, {
      headers: { 'X-Auth-Token': proxy.issued[0]! },
    });
    expect(rejected.statusCode).toBe(401);
  });

  it('tells a non-admin user that admin rights are needed and exits 2 without changing anything', async () => {
    const w = world();
    const project = await w.secondProject();
    const user = await createUser(w.admin, w.cleanup, uniqueName('member'), project.projectId);
    await grantRole(w.admin, project.projectId, user.id, await roleId(w.admin, 'member', '_member_'));
    await cli().addCloud('drainer-ft-member', {
      ...w.cloud,
      auth: {
        authUrl: w.cloud.auth.authUrl,
        username: user.name,
        password: user.password,
        userDomainId: w.admin.projectDomainId,
        projectId: project.projectId,
      },
    });

    const run = await cli().drainer(['run-once', '--node', w.settings.sourceHost], {
      cloud: 'drainer-ft-member',
    });

    expect(run.code, tail(run)).toBe(2);
    expect(run.stderr).toMatch(/admin rights needed/i);
    expect(run.output).not.toContain(user.password);
    expect((await computeService(w.admin, w.settings.sourceHost)).status).toBe('enabled');
  });
});
