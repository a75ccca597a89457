// Keystone and Nova behind a private CA (docs/examples/private-ca): the CA bundle is the key ca.pem of
// the Secret drainer-openstack, the DaemonSet mounts that Secret where clouds.yaml's `cacert` says, the
// agents' config loader reads it there, and a read-only command that borrows the agents' Secret trusts
// the same CA.
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { selfSignedCert } from '../../src/sandbox/kube/tls.ts';
import { cli } from '../cli/harness.ts';
import { startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { hasKubectl, renderCopy } from './kubectl.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

/** The example overlay, rendered from a scratch copy whose clouds.yaml and ca.pem may be `files`. */
const renderExample = async (files: Record<string, string> = {}): Promise<Obj[]> =>
  (await renderCopy(
    'docs/examples/private-ca',
    Object.fromEntries(Object.entries(files).map(([f, text]) => [`docs/examples/private-ca/${f}`, text])),
  )) as Obj[];

const decoded = (secret: Obj, key: string) => Buffer.from(secret.data[key] as string, 'base64').toString();

/** The Secret the DaemonSet mounts, where, and the container's env. */
function mounted(objs: Obj[]) {
  const pod = objs.find((o) => o.kind === 'DaemonSet').spec.template.spec;
  const c = pod.containers[0];
  const volume = pod.volumes.find((v: Obj) => v.secret);
  const mount = c.volumeMounts.find((m: Obj) => m.name === volume.name).mountPath as string;
  const env = Object.fromEntries(c.env.filter((e: Obj) => 'value' in e).map((e: Obj) => [e.name, e.value]));
  const secret = objs.find((o) => o.kind === 'Secret' && o.metadata.name === volume.secret.secretName);
  return { mount, env: env as Record<string, string>, secret };
}

describe.skipIf(!hasKubectl)('a private CA for Keystone and Nova (docs/examples/private-ca)', () => {
  it("mounts the Secret's ca.pem where clouds.yaml's cacert, and so the agent's config, says", async () => {
    const { mount, env, secret } = mounted(await renderExample());
    expect(secret.metadata.name).toMatch(/^drainer-openstack-[a-z0-9]{10}$/);
    expect(secret.metadata.namespace).toBe('drainer');
    expect(Object.keys(secret.data).sort()).toEqual(['ca.pem', 'clouds.yaml']);
    expect(env.OS_CLIENT_CONFIG_FILE).toBe(`${mount}/clouds.yaml`);

    // the agent's own loader, given the Secret's files as the container sees them
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-private-ca-pod-'));
    writeFileSync(path.join(dir, 'clouds.yaml'), decoded(secret, 'clouds.yaml'));
    const config = await loadConfig({
      argv: {},
      env: { OS_CLOUD: env.OS_CLOUD, OS_CLIENT_CONFIG_FILE: path.join(dir, 'clouds.yaml') },
      cwd: dir,
      homeDir: dir,
      etcDir: dir,
    });
    expect(config.openstack.cacert).toBe(`${mount}/ca.pem`);
    expect(decoded(secret, 'ca.pem')).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
  });

  it('holds placeholders, never values', async () => {
    const { secret } = mounted(await renderExample());
    expect(decoded(secret, 'clouds.yaml')).toMatch(/application_credential_secret: REPLACE_ME$/m);
  });

  describe("plan borrowing the agents' Secret trusts their CA", () => {
    let fx: KubeFixture;
    let keystone: ReturnType<typeof createServer>;
    beforeAll(async () => {
      // a Keystone over https whose certificate only the private CA vouches for; it refuses the credential
      const { key, cert } = await selfSignedCert('127.0.0.1');
      keystone = createServer({ key, cert }, (_req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 401, title: 'Unauthorized', message: 'wrong secret' } }));
      });
      await new Promise<void>((done) => keystone.listen(0, '127.0.0.1', done));
      const url = `https://127.0.0.1:${(keystone.address() as AddressInfo).port}/v3`;
      const clouds = yaml.dump({
        clouds: {
          drainer: {
            auth: { auth_url: url, application_credential_id: 'id', application_credential_secret: 's' },
            region_name: 'RegionOne',
            cacert: '/etc/openstack/ca.pem',
          },
        },
      });
      const objs = await renderExample({ 'clouds.yaml': clouds, 'ca.pem': cert });
      fx = await startFixture();
      const post = (p: string, body: Obj) => fx.k.request({ method: 'POST', path: p, body });
      await post('/api/v1/namespaces', { metadata: { name: 'drainer' } });
      await post('/api/v1/nodes', { metadata: { name: 'node-1' } });
      await post('/api/v1/namespaces/drainer/secrets', mounted(objs).secret);
      await post(
        '/apis/apps/v1/namespaces/drainer/daemonsets',
        objs.find((o) => o.kind === 'DaemonSet'),
      );
    });
    afterAll(async () => {
      keystone?.close();
      await fx?.close();
    });

    it("reaches Keystone over TLS with the Secret's ca.pem: Keystone's own refusal, no certificate error", async () => {
      const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-private-ca-kc-')), 'kc');
      writeFileSync(kubeconfig, fx.server.kubeconfig());
      const r = await cli({ env: { KUBECONFIG: kubeconfig } })('plan', '--node', 'node-1');
      expect(r.stderr).not.toMatch(/certificate|ENOENT|\/etc\/openstack/);
      // the credentials came from the Secret the DaemonSet mounts (drainer-openstack-<hash>), the CA too
      expect(r.stderr).toBe(
        'error: nova: keystone POST /v3/auth/tokens → 401: credentials rejected: wrong secret\n',
      );
      expect(r.code).toBe(2);
    });
  });
});
