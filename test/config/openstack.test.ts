import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { world } from './helpers.ts';

const cloud = (name: string, body: string) => `clouds:\n  ${name}:\n${body.replace(/^/gm, '    ')}\n`;

describe('OpenStack credentials from clouds.yaml', () => {
  it('looks in OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/, /etc/openstack/ and takes the first file found', async () => {
    const w = world();
    const authUrl = (where: string) => cloud('c', `auth:\n  auth_url: http://${where}:5000/v3`);
    w.write(path.join(w.etcDir, 'clouds.yaml'), authUrl('etc'));
    const url = async (env: NodeJS.ProcessEnv = {}) =>
      (await w.load({ env: { OS_CLOUD: 'c', ...env } })).openstack.auth.authUrl;

    expect(await url()).toBe('http://etc:5000/v3');
    w.write(path.join(w.userDir, 'clouds.yaml'), authUrl('user'));
    expect(await url()).toBe('http://user:5000/v3');
    w.write(path.join(w.cwd, 'clouds.yaml'), authUrl('cwd'));
    expect(await url()).toBe('http://cwd:5000/v3');
    const explicit = w.write(path.join(w.root, 'elsewhere.yaml'), authUrl('explicit'));
    expect(await url({ OS_CLIENT_CONFIG_FILE: explicit })).toBe('http://explicit:5000/v3');
  });

  it('maps snake_case keys, merges secure.yaml over the cloud and reads verify: false as insecure', async () => {
    const w = world();
    w.write(
      path.join(w.userDir, 'clouds.yaml'),
      cloud(
        'prod',
        [
          'auth:',
          '  auth_url: https://keystone.example.com/v3',
          '  username: drainer',
          '  user_domain_name: Default',
          '  project_name: admin',
          '  project_domain_id: default',
          'region_name: RegionTwo',
          'interface: internalURL',
          'cacert: /ca.pem',
          'verify: false',
          'auth_type: password',
        ].join('\n'),
      ),
    );
    w.write(path.join(w.etcDir, 'secure.yaml'), cloud('prod', 'auth:\n  password: from-secure'));

    const c = await w.load({ env: { OS_CLOUD: 'prod' } });

    expect(c.openstack).toMatchObject({
      cloud: 'prod',
      auth: {
        authUrl: 'https://keystone.example.com/v3',
        username: 'drainer',
        password: 'from-secure',
        userDomainName: 'Default',
        projectName: 'admin',
        projectDomainId: 'default',
      },
      regionName: 'RegionTwo',
      interface: 'internal',
      cacert: '/ca.pem',
      insecure: true,
    });
  });

  it('picks the cloud named by openstack.cloud over OS_CLOUD, and reads application credentials', async () => {
    const w = world();
    w.write(
      path.join(w.cwd, 'clouds.yaml'),
      'clouds:\n  a:\n    auth: {auth_url: "http://a/v3"}\n  b:\n    auth:\n      auth_url: http://b/v3\n      application_credential_id: id-b\n      application_credential_secret: s-b\n',
    );
    w.write(path.join(w.cwd, 'config.yaml'), 'openstack:\n  cloud: b\n');
    const c = await w.load({ env: { OS_CLOUD: 'a' } });
    expect(c.openstack.auth).toEqual({
      authUrl: 'http://b/v3',
      applicationCredentialId: 'id-b',
      applicationCredentialSecret: 's-b',
    });
  });

  it('says which clouds exist when the named one is missing', async () => {
    const w = world();
    w.write(path.join(w.cwd, 'clouds.yaml'), cloud('one', 'auth: {auth_url: "http://x/v3"}'));
    const e = await w.load({ env: { OS_CLOUD: 'two' } }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).message).toMatch(/no cloud "two" in .*clouds\.yaml \(clouds there: one\)/);
  });
});

describe('OpenStack credentials from OS_* and legacy keys', () => {
  it('reads an openrc-style environment', async () => {
    const c = await world().load({
      env: {
        OS_AUTH_URL: 'http://127.0.0.1:5000/v3',
        OS_USERNAME: 'admin',
        OS_PASSWORD: 'secret',
        OS_PROJECT_NAME: 'admin',
        OS_USER_DOMAIN_NAME: 'Default',
        OS_PROJECT_DOMAIN_ID: 'default',
        OS_REGION_NAME: 'RegionOne',
        OS_INTERFACE: 'internalURL',
        OS_CACERT: '/ca',
        OS_CERT: '/cert',
        OS_KEY: '/key',
        OS_INSECURE: 'true',
      },
    });
    expect(c.openstack).toMatchObject({
      auth: {
        authUrl: 'http://127.0.0.1:5000/v3',
        username: 'admin',
        password: 'secret',
        projectName: 'admin',
        userDomainName: 'Default',
        projectDomainId: 'default',
      },
      regionName: 'RegionOne',
      interface: 'internal',
      cacert: '/ca',
      cert: '/cert',
      key: '/key',
      insecure: true,
    });
  });

  it('reads nova-kubernetes-drain keys: TenantName → project, DomainID → both domains, interface internal', async () => {
    const w = world();
    w.write(
      path.join(w.cwd, 'config.yaml'),
      'IdentityEndpoint: http://keystone.openstack.svc:5000/v3\nUsername: nova\nPassword: pw\nTenantName: service\nDomainID: default\n',
    );
    const c = await w.load();
    expect(c.openstack).toMatchObject({
      auth: {
        authUrl: 'http://keystone.openstack.svc:5000/v3',
        username: 'nova',
        password: 'pw',
        projectName: 'service',
        userDomainId: 'default',
        projectDomainId: 'default',
      },
      interface: 'internal',
    });
  });

  it('merges field by field: clouds.yaml < OS_* < config file < DRAINER_* env', async () => {
    const w = world();
    w.write(
      path.join(w.cwd, 'clouds.yaml'),
      cloud(
        'c',
        'auth:\n  auth_url: http://clouds/v3\n  username: u-clouds\n  password: p-clouds\n  project_name: p-clouds\nregion_name: r-clouds',
      ),
    );
    w.write(
      path.join(w.cwd, 'config.yaml'),
      'openstack:\n  auth:\n    password: p-file\n  regionName: r-file\n',
    );
    const c = await w.load({
      env: {
        OS_CLOUD: 'c',
        OS_USERNAME: 'u-env',
        OS_PASSWORD: 'p-env',
        OS_REGION_NAME: 'r-env',
        DRAINER_OPENSTACK_REGION_NAME: 'r-drainer',
      },
    });
    expect(c.openstack.auth).toMatchObject({
      authUrl: 'http://clouds/v3', // only clouds.yaml sets it
      projectName: 'p-clouds',
      username: 'u-env', // OS_* over clouds.yaml
      password: 'p-file', // config file over OS_*
    });
    expect(c.openstack.regionName).toBe('r-drainer'); // DRAINER_* over the file
  });

  it('lets the file’s openstack: block win over its legacy keys', async () => {
    const w = world();
    w.write(
      path.join(w.cwd, 'config.yaml'),
      'Username: old\nopenstack:\n  auth:\n    username: new\n  interface: public\n',
    );
    const c = await w.load();
    expect(c.openstack.auth.username).toBe('new');
    expect(c.openstack.interface).toBe('public');
  });

  it('names OS_* as the source of a bad OS_* value', async () => {
    const e: unknown = await world()
      .load({ env: { OS_AUTH_URL: 'not a url', OS_INTERFACE: 'sideways' } })
      .catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'openstack.auth.authUrl: expected a URL, got "not a url" (in OS_* environment)',
      'openstack.interface: expected one of public, internal, admin, got "sideways" (in OS_* environment)',
    ]);
  });
});
