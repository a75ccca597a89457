// The manifests an operator applies with `kubectl apply -k daemonset/`: they parse, the DaemonSet
// keeps its promises (runs on every node, even the one being evacuated; least privilege; probes),
// the ClusterRole holds no wildcard and no secrets, and the objects apply to an API server.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from './kubectl.ts';
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
};
const DIR = 'daemonset';
const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));
const docs = new Map(files.map((f) => [f, yaml.loadAll(readFileSync(path.join(DIR, f), 'utf8')) as Obj[]]));
// the NodeMaintenance CRD is an optional component (daemonset/components/nodemaintenance-crd)
const CRD = 'components/nodemaintenance-crd/crd-nodemaintenance.yaml';
docs.set(CRD, yaml.loadAll(readFileSync(path.join(DIR, CRD), 'utf8')) as Obj[]);
const one = (file: string): Obj => {
  const d = docs.get(file)?.[0];
  if (!d) throw new Error(`${file} is empty`);
  return d;
};

interface Container {
  args?: string[];
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  livenessProbe?: { httpGet?: { path: string } };
  readinessProbe?: { httpGet?: { path: string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
    privileged?: boolean;
  };
}
interface PodSpec {
  serviceAccountName: string;
  priorityClassName: string;
  tolerations: { key?: string; operator?: string; effect?: string }[];
  terminationGracePeriodSeconds: number;
  securityContext: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  hostNetwork?: boolean;
}

const podSpec = (): PodSpec => (one('daemonset.yaml').spec as { template: { spec: PodSpec } }).template.spec;

/** Does some toleration cover this taint (operator Exists without key covers all)? */
const tolerated = (tols: PodSpec['tolerations'], key: string, effect: string) =>
  tols.some(
    (t) =>
      (t.key === undefined ? t.operator === 'Exists' : t.key === key) &&
      (t.effect === undefined || t.effect === effect),
  );

describe('daemonset/ manifests', () => {
  it('every file parses, and kustomization lists every manifest but the Secret example', () => {
    for (const [file, objs] of docs) {
      for (const o of objs) {
        expect(o.apiVersion, file).toBeTruthy();
        expect(o.kind, file).toBeTruthy();
      }
    }
    const listed = (one('kustomization.yaml') as unknown as { resources: string[] }).resources;
    const expected = files.filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml');
    expect([...listed].sort()).toEqual(expected.sort());
  });

  it('DaemonSet: NODE_NAME from the downward API, runs on cordoned, tainted and control-plane nodes', () => {
    const spec = podSpec();
    const [c] = spec.containers;
    expect(c?.env).toContainEqual({
      name: 'NODE_NAME',
      valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } },
    });
    expect(c?.args?.[0]).toBe('daemon');
    for (const [key, effect] of [
      ['node.kubernetes.io/unschedulable', 'NoSchedule'],
      ['drainer.dev/evacuating', 'NoSchedule'],
      ['kubevirt.io/drain', 'NoSchedule'],
      ['node-role.kubernetes.io/control-plane', 'NoSchedule'],
      ['node.kubernetes.io/not-ready', 'NoExecute'],
    ] as const) {
      expect(tolerated(spec.tolerations, key, effect), `${key}:${effect}`).toBe(true);
    }
    expect(spec.priorityClassName).toBe('system-node-critical');
    expect(spec.serviceAccountName).toBe(one('serviceaccount.yaml').metadata.name);
  });

  it('DaemonSet: probes on /healthz and /readyz, resources set, grace longer than the shutdown path', () => {
    const spec = podSpec();
    const c = spec.containers[0] as Container;
    expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(c.resources?.requests?.memory).toBeTruthy();
    expect(c.resources?.limits?.memory).toBeTruthy();
    // SIGTERM: stop new work, keep the record, close watches; the kubelet's default is 30 s
    expect(spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(15);
  });

  it('DaemonSet: non-root, read-only root filesystem, no privilege escalation, every capability dropped', () => {
    const spec = podSpec();
    expect(spec.securityContext.runAsNonRoot).toBe(true);
    expect(spec.securityContext.runAsUser).toBeGreaterThan(0);
    expect(spec.hostNetwork).toBeFalsy();
    for (const c of spec.containers) {
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.securityContext?.privileged).toBeFalsy();
      expect(c.securityContext?.capabilities?.add ?? []).toEqual([]);
    }
  });

  it('ClusterRole: no wildcard, no secrets; the binding names it and the ServiceAccount', () => {
    const role = one('clusterrole.yaml') as unknown as {
      metadata: { name: string };
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    for (const r of role.rules) {
      expect([...r.apiGroups, ...r.resources, ...r.verbs]).not.toContain('*');
      expect(r.resources).not.toContain('secrets');
    }
    const binding = one('clusterrolebinding.yaml') as unknown as {
      roleRef: { name: string };
      subjects: { kind: string; name: string; namespace: string }[];
    };
    expect(binding.roleRef.name).toBe(role.metadata.name);
    expect(binding.subjects).toContainEqual({
      kind: 'ServiceAccount',
      name: one('serviceaccount.yaml').metadata.name,
      namespace: one('namespace.yaml').metadata.name,
    });
  });

  it('the Secret example holds placeholders, never values', () => {
    const text = readFileSync(path.join(DIR, 'secret.example.yaml'), 'utf8');
    expect(text).toMatch(/REPLACE_ME/);
    expect(text).not.toMatch(/(password|secret):\s*(?!REPLACE_ME)[^\s#]+\s*$/im);
  });

  it('the NodeMaintenance CRD prints Node/Phase/Progress/Age and answers to "nm"', () => {
    const crd = one(CRD) as unknown as {
      spec: {
        names: { shortNames: string[] };
        versions: { name: string; additionalPrinterColumns: { name: string }[] }[];
      };
    };
    expect(crd.spec.names.shortNames).toContain('nm');
    expect(crd.spec.versions[0]?.name).toBe('v1beta1');
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'Node',
      'Phase',
      'Progress',
      'Age',
    ]);
  });
});

/** The collection path of an object's kind, from discovery; undefined when the server does not serve it. */
async function collectionPath(url: string, o: Obj): Promise<string | undefined> {
  const base = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  const res = await fetch(url + base);
  if (!res.ok) return undefined;
  const list = (await res.json()) as { resources: { name: string; kind: string; namespaced: boolean }[] };
  const r = list.resources.find((x) => x.kind === o.kind && !x.name.includes('/'));
  if (!r) return undefined;
  return r.namespaced
    ? `${base}/namespaces/${o.metadata.namespace ?? 'drainer'}/${r.name}`
    : `${base}/${r.name}`;
}

describe('applying daemonset/ to the sandbox API server', () => {
  let api: KubeApiServer;
  let kubeconfig: string;
  beforeAll(async () => {
    // without drainer's CRDs: the manifest's CRD is what makes NodeMaintenances served
    api = await startKubeApiServer({ crds: false });
    kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-manifests-')), 'kubeconfig');
    writeFileSync(kubeconfig, api.kubeconfig());
  });
  afterAll(async () => api?.close());

  // The sandbox serves the kinds drainer itself uses; ServiceAccount, ConfigMap and RBAC are not among them.
  const NOT_SERVED = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ServiceAccount'];

  it('creates every served object through the REST API; the CRD makes nodemaintenances served', async () => {
    const nmPath = '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances';
    expect((await fetch(api.url + nmPath)).status).toBe(404);
    const listed = (one('kustomization.yaml') as unknown as { resources: string[] }).resources;
    const skipped: string[] = [];
    for (const file of [CRD, ...listed]) {
      for (const o of docs.get(file) ?? []) {
        const where = await collectionPath(api.url, o);
        if (!where) {
          skipped.push(o.kind);
          continue;
        }
        const res = await fetch(api.url + where, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(o),
        });
        expect(res.status, `${o.kind} ${o.metadata.name}: ${await res.text()}`).toBe(201);
      }
    }
    expect([...new Set(skipped)].sort()).toEqual(NOT_SERVED);
    const nm = await fetch(api.url + nmPath, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
        kind: 'NodeMaintenance',
        metadata: { name: 'nm-1' },
        spec: { nodeName: 'node-1', reason: 'test' },
      }),
    });
    expect(nm.status).toBe(201);
  });

  it.skipIf(!existsSync('/usr/bin/kubectl'))(
    'kubectl apply -k daemonset/ --dry-run=client parses (validation off: the sandbox has no OpenAPI document)',
    async () => {
      const built = await kubectl(['kustomize', DIR]);
      expect(built.code, built.stderr).toBe(0);
      const kinds = (yaml.loadAll(built.stdout) as Obj[]).map((o) => o.kind).sort();
      // the agents' roles, bound to their ServiceAccount, and the read-only ones, bound to nobody
      expect(kinds).toEqual([
        'ClusterRole',
        'ClusterRole',
        'ClusterRoleBinding',
        'ConfigMap',
        'DaemonSet',
        'Namespace',
        'Role',
        'Role',
        'RoleBinding',
        'ServiceAccount',
      ]);

      // asynchronously: the API server it talks to runs in this process
      const run = await kubectl([
        'apply',
        '-k',
        DIR,
        '--dry-run=client',
        '--validate=false',
        '--kubeconfig',
        kubeconfig,
      ]);
      expect(run.stdout).toMatch(/daemonset\.apps\/drainer (created|configured|unchanged) \(dry run\)/);
      expect(run.stdout).toMatch(/namespace\/drainer (created|configured|unchanged) \(dry run\)/);
      // the only complaints: kinds the sandbox does not serve
      const errors = run.stderr.split('\n').filter((l) => l.startsWith('resource mapping not found'));
      for (const e of errors)
        expect(e).toMatch(new RegExp(`no matches for kind "(${NOT_SERVED.join('|')})"`));
      const other = run.stderr
        .split('\n')
        .filter((l) => l && !l.startsWith('resource mapping') && !l.startsWith('ensure CRDs'));
      expect(other).toEqual([]);
    },
  );
  it.skipIf(!existsSync('/usr/bin/kubectl'))(
    'kubectl apply -k --dry-run=client takes an overlay with every component',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'drainer-overlay-'));
      cpSync(DIR, path.join(dir, 'daemonset'), { recursive: true });
      const components = ['nodemaintenance-crd', 'pod-delete', 'node-restriction', 'without-nova', 'logind'];
      writeFileSync(
        path.join(dir, 'kustomization.yaml'),
        yaml.dump({
          resources: ['daemonset'],
          components: components.map((c) => `daemonset/components/${c}`),
        }),
      );
      const run = await kubectl([
        'apply',
        '-k',
        dir,
        '--dry-run=client',
        '--validate=false',
        '--kubeconfig',
        kubeconfig,
      ]);
      expect(run.stdout).toMatch(/daemonset\.apps\/drainer (created|configured|unchanged) \(dry run\)/);
      expect(run.stdout).toMatch(
        /customresourcedefinition\.apiextensions\.k8s\.io\/nodemaintenances\.nodemaintenance\.medik8s\.io (created|configured|unchanged) \(dry run\)/,
      );
      // the only complaints: kinds the sandbox does not serve (RBAC, and the admission policy)
      const notServed = [...NOT_SERVED, 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
      const errors = run.stderr.split('\n').filter((l) => l.startsWith('resource mapping not found'));
      for (const e of errors) expect(e).toMatch(new RegExp(`no matches for kind "(${notServed.join('|')})"`));
      const other = run.stderr
        .split('\n')
        .filter((l) => l && !l.startsWith('resource mapping') && !l.startsWith('ensure CRDs'));
      expect(other).toEqual([]);
    },
  );
});
