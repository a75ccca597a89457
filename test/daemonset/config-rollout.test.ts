// An operator's second week: a setting changed in an overlay reaches the agents by itself. The
// agents read config.yaml only at start, so the ConfigMap is made by kustomize's configMapGenerator:
// its name carries a hash of its content, the DaemonSet names it, and a changed setting is a changed
// pod template that `kubectl apply -k` rolls out. The read-only commands find that hashed ConfigMap
// (and the Secret) through the DaemonSet's volumes, not by a fixed name.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountsOf } from '../../src/cli/agent-mounts.ts';
import { startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { cli } from '../cli/harness.ts';
import { hasKubectl, renderCopy } from './kubectl.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

/** daemonset/ (or the overlay `dir`) rendered from a scratch copy with `files` written over it. */
const render = async (files: Record<string, string> = {}, dir = 'daemonset'): Promise<Obj[]> =>
  (await renderCopy(dir, files)) as Obj[];

const configMapOf = (objs: Obj[]) => objs.find((o) => o.kind === 'ConfigMap');
const podTemplateOf = (objs: Obj[]) => objs.find((o) => o.kind === 'DaemonSet').spec.template;
const configVolume = (objs: Obj[]) =>
  podTemplateOf(objs).spec.volumes.find((v: Obj) => v.name === 'config').configMap.name as string;

describe.skipIf(!hasKubectl)('config changes through an overlay roll the agents by themselves', () => {
  it('the stock ConfigMap is generated from daemonset/config/config.yaml, its name hashed, and the DaemonSet mounts that name', async () => {
    const objs = await render();
    const cm = configMapOf(objs);
    expect(cm.metadata.name).toMatch(/^drainer-config-[a-z0-9]{10}$/);
    expect(cm.metadata.namespace).toBe('drainer');
    expect(cm.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'drainer' });
    expect(cm.data['config.yaml']).toBe(readFileSync('daemonset/config/config.yaml', 'utf8'));
    expect(configVolume(objs)).toBe(cm.metadata.name);
  });

  it("the example overlay's changed setting is a new ConfigMap name in the pod template: apply -k rolls the agents", async () => {
    const stock = await render();
    const changed = await render({}, 'docs/examples/config-change');
    const config = yaml.load(configMapOf(changed).data['config.yaml']) as Obj;
    expect(config.nova.maxConcurrentMigrations).toBe(2);
    expect(configMapOf(changed).metadata.labels).toEqual({ 'app.kubernetes.io/name': 'drainer' });
    expect(configVolume(changed)).toBe(configMapOf(changed).metadata.name);
    expect(configVolume(changed)).not.toBe(configVolume(stock));
    // the pod template differs only there: nothing else restarts the agents
    const before = JSON.stringify(podTemplateOf(stock)).replace(configVolume(stock), 'CM');
    expect(JSON.stringify(podTemplateOf(changed)).replace(configVolume(changed), 'CM')).toBe(before);
  });

  it('a JSON patch of config.yaml (as the real suite makes) renames it too', async () => {
    const stock = await render();
    const patch = [{ op: 'replace', path: '/data/config.yaml', value: 'logLevel: debug\n' }];
    const patched = await render(
      {
        'kustomization.yaml': yaml.dump({
          resources: ['daemonset'],
          patches: [{ target: { kind: 'ConfigMap', name: 'drainer-config' }, patch: JSON.stringify(patch) }],
        }),
      },
      '.',
    );
    expect(configMapOf(patched).data['config.yaml']).toBe('logLevel: debug\n');
    expect(configVolume(patched)).toBe(configMapOf(patched).metadata.name);
    expect(configVolume(patched)).not.toBe(configVolume(stock));
  });
});

describe.skipIf(!hasKubectl)("the read-only commands find the agents' hashed ConfigMap", () => {
  let fx: KubeFixture;
  let env: NodeJS.ProcessEnv;
  let name = '';
  beforeAll(async () => {
    fx = await startFixture();
    // the overlay's config: a change freeze in force, which status shows in its header
    const freeze = { from: '2000-01-01T00:00:00Z', to: '2999-01-01T00:00:00Z', reason: 'release week' };
    const objs = await render(
      { 'docs/examples/config-change/config.yaml': yaml.dump({ fleet: { freezes: [freeze] } }) },
      'docs/examples/config-change',
    );
    name = configMapOf(objs).metadata.name as string;
    const post = (p: string, body: Obj) => fx.k.request({ method: 'POST', path: p, body });
    await post(
      '/api/v1/namespaces',
      objs.find((o) => o.kind === 'Namespace'),
    );
    await post('/api/v1/namespaces/drainer/configmaps', configMapOf(objs));
    await post(
      '/apis/apps/v1/namespaces/drainer/daemonsets',
      objs.find((o) => o.kind === 'DaemonSet'),
    );
    // what an upgrade from a fixed name leaves behind: read by nobody any more
    await post('/api/v1/namespaces/drainer/configmaps', {
      metadata: { name: 'drainer-config' },
      data: { 'config.yaml': 'nova:\n  maxConcurrentMigrations: 7\n' },
    });
    const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-config-rollout-')), 'kc');
    writeFileSync(kubeconfig, fx.server.kubeconfig());
    env = { KUBECONFIG: kubeconfig };
  });
  afterAll(async () => fx?.close());

  it('status weighs the ConfigMap the DaemonSet mounts (its freeze), not a leftover of the old fixed name', async () => {
    const r = await cli({ env })('status');
    const lines = r.stdout.trimEnd().split('\n');
    // the header: a line of its own for the freezes once window, freezes and blockers pass 120 columns
    const header = lines.slice(
      0,
      lines.findIndex((l) => l.startsWith('NODE')),
    );
    expect(header.join('\n')).toMatch(/freezes: release week until 2999-01-01T00:00:00Z/);
    expect(lines.at(-1)).toBe(`config: the agents' ConfigMap drainer/${name}`);
  });
});

describe("the agents' ConfigMap, Secret and cloud, read off their DaemonSet", () => {
  const ds = (container: Obj, volumes: Obj[] = []) => ({
    spec: { template: { spec: { containers: [container], volumes } } },
  });

  it('follows the container: --config-path and OS_CLIENT_CONFIG_FILE to their mounts, OS_CLOUD', () => {
    const agents = mountsOf(
      ds(
        {
          args: ['daemon', '--config-path=/config/drainer/settings.yaml'],
          env: [
            { name: 'OS_CLOUD', value: 'prod' },
            { name: 'OS_CLIENT_CONFIG_FILE', value: '/secrets/os/clouds.yaml' },
          ],
          volumeMounts: [
            { name: 'all-config', mountPath: '/config' },
            { name: 'settings', mountPath: '/config/drainer/' },
            { name: 'os', mountPath: '/secrets/os' },
          ],
        },
        [
          { name: 'all-config', configMap: { name: 'wrong' } },
          { name: 'settings', configMap: { name: 'drainer-settings-abc' } },
          { name: 'os', secret: { secretName: 'openstack-prod-xyz' } },
        ],
      ),
    );
    expect(agents).toEqual({
      configMap: 'drainer-settings-abc',
      secret: 'openstack-prod-xyz',
      secretMount: '/secrets/os',
      cloud: 'prod',
    });
  });

  it('keeps the stock names for what the DaemonSet does not say (an agent run another way)', () => {
    expect(mountsOf(ds({ name: 'drainer', image: 'drainer' }))).toEqual({
      configMap: 'drainer-config',
      secret: 'drainer-openstack',
      secretMount: '/etc/openstack',
      cloud: 'drainer',
    });
  });
});
