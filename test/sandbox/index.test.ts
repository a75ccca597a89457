import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { configSchema } from '../../src/config/schema.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import type { KubeObject } from '../../src/sandbox/kube/types.ts';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;

describe('startSandbox', () => {
  it('boots the default scenario with every object in place', async () => {
    sb = await startSandbox({ scale: 20 });
    const { store } = sb.kube;

    expect(store.list('nodes').map((n) => n.metadata.name)).toEqual(['node-1', 'node-2', 'node-3', 'node-4']);
    const pods = store.list('pods');
    expect(pods).toHaveLength(36); // 30 workload pods + 6 virt-launcher pods
    expect(pods.every((p) => statusOf(p).phase === 'Running')).toBe(true);
    expect(pods.filter((p) => p.metadata.labels?.['kubevirt.io'] === 'virt-launcher')).toHaveLength(6);
    const vmis = store.list('virtualmachineinstances.kubevirt.io');
    expect(vmis.map((v) => statusOf(v).phase)).toEqual(Array(6).fill('Running'));
    expect(store.list('kubevirts.kubevirt.io', { namespace: 'kubevirt' })).toHaveLength(1);
    expect(store.list('daemonsets.apps')).toHaveLength(1);
    expect(store.list('replicasets.apps')).toHaveLength(6);
    const pdbs = store.list('poddisruptionbudgets.policy');
    expect(pdbs).toHaveLength(4);
    expect(pdbs.every((p) => (statusOf(p).disruptionsAllowed as number) > 0)).toBe(true);
    expect(sb.openstack.state.servers()).toHaveLength(13);
    expect(sb.openstack.state.services().map((s) => s.host)).toContain('node-1.cloud.example.org');
  });

  it('writes a kubeconfig and a drainer config that the config schema accepts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-'));
    sb = await startSandbox({ stateDir: dir, scale: 20 });

    const kubeconfig = await readFile(join(dir, 'kubeconfig'), 'utf8');
    const config = configSchema.parse(yaml.load(await readFile(join(dir, 'config.yaml'), 'utf8')));

    expect(sb.kubeconfigPath).toBe(join(dir, 'kubeconfig'));
    expect(kubeconfig).toContain(sb.kube.url);
    expect(config.kubeconfig).toBe(join(dir, 'kubeconfig'));
    expect(config.openstack.auth).toMatchObject({
      authUrl: sb.openstack.identityUrl,
      username: 'admin',
      projectName: 'admin',
      userDomainName: 'Default',
    });
    expect(config.nova.enabled).toBe(true);
    expect(config.kubevirt.enabled).toBe(true);
    expect(configSchema.parse(sb.drainerConfig)).toEqual(config);
    // drainer's own loader, with an empty environment, reads the same thing.
    const loaded = await loadConfig({
      configPath: join(dir, 'config.yaml'),
      env: {},
      cwd: dir,
      homeDir: dir,
    });
    expect(loaded.openstack.auth.authUrl).toBe(sb.openstack.identityUrl);
    expect(loaded.kubeconfig).toBe(join(dir, 'kubeconfig'));
  });

  it('credentials in the config authenticate against the Keystone emulation', async () => {
    sb = await startSandbox({ scale: 20 });
    const auth = configSchema.parse(sb.drainerConfig).openstack.auth;

    const res = await fetch(`${auth.authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: {
              user: { name: auth.username, password: auth.password, domain: { name: auth.userDomainName } },
            },
          },
          scope: { project: { name: auth.projectName, domain: { name: auth.projectDomainName } } },
        },
      }),
    });

    expect(res.status).toBe(201);
  });

  it('serves no KubeVirt resources when the scenario has no KubeVirt', async () => {
    sb = await startSandbox({ scenario: { nodes: [{ name: 'n1' }], kubevirt: { installed: false } } });

    const res = await fetch(`${sb.kube.url}/apis/kubevirt.io/v1/virtualmachineinstances`);

    expect(res.status).toBe(404);
    expect(sb.controllers.running).not.toContain('kubevirt');
    expect(configSchema.parse(sb.drainerConfig).kubevirt.enabled).toBe(false);
  });

  it('maps nodes to nova hosts in the config only where the scenario says so', async () => {
    sb = await startSandbox({
      scenario: {
        nodes: [{ name: 'n1', novaHost: 'compute-1' }, { name: 'n2' }],
        openstack: { hosts: [{ name: 'compute-1' }, { name: 'n2' }] },
      },
    });

    expect(configSchema.parse(sb.drainerConfig).nova.hostMapping).toEqual({ n1: 'compute-1' });
  });
});
