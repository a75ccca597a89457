// The install that fits a real cluster: the DaemonSet runs on hypervisors only (openstack-helm's
// label, or another through a patch), the Secret is required while Nova is on, and each optional
// piece is a kustomize Component that builds and applies (kubectl kustomize, apply --dry-run=client).
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { hasKubectl, kubectl } from './kubectl.ts';

interface Obj {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: {
    template?: {
      spec: {
        nodeSelector?: Record<string, string>;
        affinity?: unknown;
        volumes: { name: string; secret?: { secretName: string; optional?: boolean } }[];
        containers: {
          image?: string;
          env: { name: string; value?: string }[];
          volumeMounts: { name: string }[];
        }[];
      };
    };
  };
}

/** Builds an overlay of the repository's daemonset/ in a scratch copy: `kustomization` is its body. */
async function build(kustomization: object): Promise<Obj[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-kustomize-'));
  cpSync('daemonset', path.join(dir, 'daemonset'), { recursive: true });
  writeFileSync(path.join(dir, 'kustomization.yaml'), yaml.dump(kustomization));
  const out = await kubectl(['kustomize', dir]);
  expect(out.code, out.stderr).toBe(0);
  return yaml.loadAll(out.stdout) as Obj[];
}

const daemonSet = (objs: Obj[]) => objs.find((o) => o.kind === 'DaemonSet')?.spec?.template?.spec;

describe('daemonset/ as installed', () => {
  const ds = (yaml.load(readFileSync('daemonset/daemonset.yaml', 'utf8')) as Obj).spec?.template?.spec;

  it('runs on openstack-helm compute nodes only, by default', () => {
    expect(ds?.nodeSelector).toEqual({ 'openstack-compute-node': 'enabled' });
  });

  it('requires the OpenStack Secret (Nova is on by default): a missing one stops the Pod at install time', () => {
    const secret = ds?.volumes.find((v) => v.name === 'openstack')?.secret;
    expect(secret?.secretName).toBe('drainer-openstack');
    expect(secret?.optional).toBeUndefined();
  });
});

describe.skipIf(!hasKubectl)('kustomize components', () => {
  it('the base has no NodeMaintenance CRD; the nodemaintenance-crd component adds it', async () => {
    const base = await build({ resources: ['daemonset'] });
    expect(base.map((o) => o.kind)).not.toContain('CustomResourceDefinition');
    const withCrd = await build({
      resources: ['daemonset'],
      components: ['daemonset/components/nodemaintenance-crd'],
    });
    expect(withCrd.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name)).toEqual([
      'nodemaintenances.nodemaintenance.medik8s.io',
    ]);
  });

  it('without-nova: no Secret volume or mount, Nova switched off', async () => {
    const spec = daemonSet(
      await build({ resources: ['daemonset'], components: ['daemonset/components/without-nova'] }),
    );
    expect(spec?.volumes.map((v) => v.name)).toEqual(['config', 'tmp']);
    expect(spec?.containers[0]?.volumeMounts.map((m) => m.name)).toEqual(['config', 'tmp']);
    expect(spec?.containers[0]?.env).toContainEqual({ name: 'DRAINER_NOVA_ENABLED', value: 'false' });
  });

  it('monitoring/release: the PodMonitor and PrometheusRule carry release=kube-prometheus-stack', async () => {
    const objs = await build({
      resources: ['daemonset/monitoring'],
      components: ['daemonset/monitoring/release'],
    });
    for (const kind of ['PodMonitor', 'PrometheusRule'])
      expect(objs.find((o) => o.kind === kind)?.metadata.labels, kind).toMatchObject({
        release: 'kube-prometheus-stack',
        'app.kubernetes.io/name': 'drainer',
      });
  });

  it("the README's node selection patch for another label convention builds", async () => {
    const readme = readFileSync('README.md', 'utf8');
    const snippet = /<!-- node-selector-patch -->\n```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet, 'README: the node selector patch').toBeDefined();
    const overlay = yaml.load(snippet ?? '') as { resources: string[] };
    const spec = daemonSet(await build({ ...overlay, resources: ['daemonset'] }));
    expect(spec?.nodeSelector).toEqual({ 'node-role.kubernetes.io/compute': '' });
  });

  it("the README's image overlay names the image you built and pushed (the stock one is not published)", async () => {
    const readme = readFileSync('README.md', 'utf8');
    const snippet = /<!-- image-overlay -->\n```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet, 'README: the images: overlay').toBeDefined();
    const spec = daemonSet(
      await build({ ...(yaml.load(snippet ?? '') as object), resources: ['daemonset'] }),
    );
    expect(spec?.containers[0]?.image).toBe('registry.example.org/infra/drainer:0.1.0');
  });

  it("the runbook's nodeAffinity patch keeps the agent off a node labelled drainer.dev/agent=disabled, and leaves the compute label alone", async () => {
    const runbook = readFileSync('docs/operations.md', 'utf8');
    const snippet = /<!-- agent-affinity-patch -->\n```yaml\n([\s\S]*?)```/.exec(runbook)?.[1];
    expect(snippet, 'operations.md: the nodeAffinity patch').toBeDefined();
    const spec = daemonSet(
      await build({ ...(yaml.load(snippet ?? '') as object), resources: ['daemonset'] }),
    );
    expect(spec?.nodeSelector).toEqual({ 'openstack-compute-node': 'enabled' });
    expect(spec?.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'drainer.dev/agent', operator: 'NotIn', values: ['disabled'] }] },
          ],
        },
      },
    });
    expect(runbook).not.toMatch(/take the compute label off/);
  });

  it('the base builds with every component of daemonset/components at once (kubectl kustomize)', async () => {
    const objs = await build({
      resources: ['daemonset'],
      components: [
        'daemonset/components/nodemaintenance-crd',
        'daemonset/components/without-nova',
        'daemonset/components/pod-delete',
        'daemonset/components/node-restriction',
      ],
    });
    // the ConfigMap's name carries its content's hash (kustomize's configMapGenerator)
    const names = objs.map(
      (o) => `${o.kind}/${o.metadata.name.replace(/^(drainer-config)-[a-z0-9]{10}$/, '$1')}`,
    );
    expect(names.sort()).toEqual([
      'ClusterRole/drainer',
      'ClusterRole/drainer-pod-delete',
      'ClusterRole/drainer-readonly',
      'ClusterRoleBinding/drainer',
      'ClusterRoleBinding/drainer-pod-delete',
      'ConfigMap/drainer-config',
      'CustomResourceDefinition/nodemaintenances.nodemaintenance.medik8s.io',
      'DaemonSet/drainer',
      'Namespace/drainer',
      'Role/drainer',
      'Role/drainer-readonly',
      'RoleBinding/drainer',
      'ServiceAccount/drainer',
      'ValidatingAdmissionPolicy/drainer-node-restriction',
      'ValidatingAdmissionPolicyBinding/drainer-node-restriction',
    ]);
  });
});
