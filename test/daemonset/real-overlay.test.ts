// The real suite's install (test/real, README "Real cluster tests") is the stock one: its generated overlay
// differs from `kubectl kustomize daemonset/` only where the README says, and `npm run test:real` without a
// cluster says so in one line and succeeds (what CI sees).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { writeOverlay, type Overlay } from '../real/support/overlay.ts';
import { hasKubectl, kubectl } from './kubectl.ts';

const REPO = path.resolve(import.meta.dirname, '../..');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = any;

/** The paths where `b` differs from `a` (added, removed or changed leaves). */
function differences(a: unknown, b: unknown, at = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}/${k}`),
    );
  }
  return [at];
}

/** The generated ConfigMap by its name before kustomize's content hash (drainer-config-<hash>). */
const unhashed = (o: Obj): string =>
  o.kind === 'ConfigMap' ? String(o.metadata.name).replace(/-[a-z0-9]{10}$/, '') : o.metadata.name;
const byKey = (objs: Obj[]) => new Map(objs.map((o) => [`${o.kind}/${unhashed(o)}`, o]));

describe.skipIf(!hasKubectl)('the real suite installs the stock manifests', () => {
  const env = {
    kubeconfig: '/dev/null',
    node: 'real-node-1',
    openrc: '/dev/null',
    novaHost: 'compute-a',
    kubectl: 'kubectl',
    agentPort: 18080,
  };
  const os = {
    OS_AUTH_URL: 'http://127.0.0.1:5000/v3',
    OS_USERNAME: 'admin',
    OS_PASSWORD: 'not-a-secret',
    OS_PROJECT_NAME: 'admin',
  };
  let overlay: Overlay | undefined;
  afterAll(() => overlay?.remove());

  it('changes only the network, the API address, the port, Pod Security, the host mapping, the Secret and the CRD', async () => {
    overlay = writeOverlay(REPO, env, os, { host: '127.0.0.1', port: '6443' });
    const [stock, test] = await Promise.all([
      kubectl(['kustomize', path.join(REPO, 'daemonset')]),
      kubectl(['kustomize', overlay.dir]),
    ]);
    expect(test.code, test.stderr).toBe(0);
    const before = byKey(yaml.loadAll(stock.stdout) as Obj[]);
    const after = byKey(yaml.loadAll(test.stdout) as Obj[]);

    expect([...after.keys()].filter((k) => !before.has(k)).sort()).toEqual([
      'CustomResourceDefinition/nodemaintenances.nodemaintenance.medik8s.io',
      'Secret/drainer-openstack',
    ]);
    // the stock env list, then the three the overlay appends
    const n = before.get('DaemonSet/drainer').spec.template.spec.containers[0].env.length as number;
    const changed = [...before.keys()].flatMap((k) =>
      differences(before.get(k), after.get(k)).map((p) => `${k}${p}`),
    );
    expect(changed.sort()).toEqual(
      [
        'ConfigMap/drainer-config/data/config.yaml',
        // its content hash: the DaemonSet mounts the overlay's ConfigMap, so a changed setting rolls the agents
        'ConfigMap/drainer-config/metadata/name',
        'DaemonSet/drainer/spec/template/spec/volumes/0/configMap/name',
        'DaemonSet/drainer/spec/template/metadata/annotations/prometheus.io/port',
        ...[n, n + 1, n + 2].map((i) => `DaemonSet/drainer/spec/template/spec/containers/0/env/${i}`),
        'DaemonSet/drainer/spec/template/spec/containers/0/ports/0/containerPort',
        'DaemonSet/drainer/spec/template/spec/hostNetwork',
        'Namespace/drainer/metadata/labels/pod-security.kubernetes.io/enforce',
      ].sort(),
    );
    const config = (o: Obj) => yaml.load(o.data['config.yaml']) as Obj;
    const cm = 'ConfigMap/drainer-config';
    expect(differences(config(before.get(cm)), config(after.get(cm)))).toEqual(['/nova/hostMapping']);
    expect(config(after.get(cm)).nova.hostMapping).toEqual({ 'real-node-1': 'compute-a' });
    const volumes = after.get('DaemonSet/drainer').spec.template.spec.volumes as Obj[];
    expect(volumes.find((v) => v.name === 'config').configMap.name).toBe(after.get(cm).metadata.name);
    const ds = after.get('DaemonSet/drainer').spec.template.spec;
    expect(ds.containers[0].env.slice(n)).toEqual([
      { name: 'KUBERNETES_SERVICE_HOST', value: '127.0.0.1' },
      { name: 'KUBERNETES_SERVICE_PORT', value: '6443' },
      { name: 'DRAINER_SERVER_PORT', value: '18080' },
    ]);
  });

  it("a case's own settings go in by README's configMapGenerator merge: a new ConfigMap name, mounted by the DaemonSet, with the mapping kept", async () => {
    const api = { host: '127.0.0.1', port: '6443' };
    const plain = writeOverlay(REPO, env, os, api);
    const changed = writeOverlay(REPO, env, os, api, {
      config: { logLevel: 'debug' },
      daemonSetOps: [{ op: 'add', path: '/spec/template/spec/priorityClassName', value: 'x' }],
    });
    try {
      const [a, b] = await Promise.all([
        kubectl(['kustomize', plain.dir]),
        kubectl(['kustomize', changed.dir]),
      ]);
      expect(b.code, b.stderr).toBe(0);
      const [before, after] = [a, b].map((r) => byKey(yaml.loadAll(r.stdout) as Obj[]));
      const cm = (m: Map<string, Obj>) => m.get('ConfigMap/drainer-config');
      expect(cm(after!).metadata.name).not.toBe(cm(before!).metadata.name);
      expect(yaml.load(cm(after!).data['config.yaml'])).toMatchObject({
        logLevel: 'debug',
        nova: { hostMapping: { 'real-node-1': 'compute-a' } },
      });
      const spec = after!.get('DaemonSet/drainer').spec.template.spec;
      expect(spec.volumes.find((v: Obj) => v.name === 'config').configMap.name).toBe(
        cm(after!).metadata.name,
      );
      expect(spec.priorityClassName).toBe('x');
    } finally {
      plain.remove();
      changed.remove();
    }
  });

  it('`npm run test:real` without a cluster prints one line saying why it skipped, and succeeds', async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['test/real/run.ts'], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    });
    expect(stdout.trim().split('\n')).toEqual([
      'test:real skipped: DRAINER_REAL_KUBECONFIG is not set (a real cluster; README "Real cluster tests")',
    ]);
    expect(stderr).toBe('');
  });
});
