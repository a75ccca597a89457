// Stock kubectl (1.32, /usr/bin/kubectl) against the sandbox: the commands a user types.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, node, pod, type Api } from './helpers.ts';

const KUBECTL = '/usr/bin/kubectl';
const hasKubectl = existsSync(KUBECTL);
if (!hasKubectl) console.warn(`kubectl e2e tests skipped: ${KUBECTL} not found`);

const NM_YAML = `apiVersion: nodemaintenance.medik8s.io/v1beta1
kind: NodeMaintenance
metadata:
  name: nm-n2
spec:
  nodeName: n2
  reason: firmware upgrade
`;

async function kubectlIn(dir: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], {
    env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir },
    timeout: 60_000,
  });
}

describe.skipIf(!hasKubectl)('sandbox API server with stock kubectl', () => {
  let api: Api;
  let dir: string;
  const kubectl = (...args: string[]) => kubectlIn(dir, ...args);

  beforeAll(async () => {
    api = await startApi();
    dir = await mkdtemp(join(tmpdir(), 'drainer-kubectl-'));
    await writeFile(join(dir, 'kubeconfig'), api.server.kubeconfig());
    const s = api.server.store;
    for (const name of ['n1', 'n2']) s.create('nodes', node(name));
    s.create('namespaces', { metadata: { name: 'apps' } });
    const rs = s.create('replicasets.apps', { metadata: { name: 'web-rs', namespace: 'apps' }, spec: {} });
    const ds = s.create('daemonsets.apps', {
      metadata: { name: 'agent', namespace: 'kube-system' },
      spec: {},
    });
    const owner = (kind: string, o: typeof rs) => [
      {
        apiVersion: 'apps/v1',
        kind,
        name: o.metadata.name ?? '',
        uid: o.metadata.uid ?? '',
        controller: true,
      },
    ];
    for (const name of ['web-1', 'web-2']) {
      const p = pod('apps', name, { node: 'n1', labels: { app: 'web' }, grace: 0 });
      p.metadata.ownerReferences = owner('ReplicaSet', rs);
      s.create('pods', p);
    }
    const scratch = pod('apps', 'scratch', { node: 'n1', grace: 0 });
    scratch.metadata.ownerReferences = owner('ReplicaSet', rs);
    (scratch.spec as { volumes?: unknown[] }).volumes = [{ name: 'tmp', emptyDir: {} }];
    s.create('pods', scratch);
    const agent = pod('kube-system', 'agent-n1', { node: 'n1', grace: 0 });
    agent.metadata.ownerReferences = owner('DaemonSet', ds);
    s.create('pods', agent);
  });
  afterAll(async () => {
    await api?.server.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('gets nodes and pods in all namespaces', async () => {
    const nodes = await kubectl('get', 'nodes');
    const pods = await kubectl('get', 'pods', '-A');

    expect(nodes.stdout).toMatch(/^n1\s+Ready\s/m);
    expect(nodes.stdout).toMatch(/^n2\s+Ready\s/m);
    expect(pods.stdout).toMatch(/^apps\s+web-1\s+/m);
    expect(pods.stdout).toMatch(/^kube-system\s+agent-n1\s+/m);
  });

  it('cordons and uncordons a node', async () => {
    const cordon = await kubectl('cordon', 'n2');
    const cordoned = api.server.store.get('nodes', undefined, 'n2');
    const uncordon = await kubectl('uncordon', 'n2');

    expect(cordon.stdout).toContain('node/n2 cordoned');
    expect(cordoned.spec).toMatchObject({ unschedulable: true });
    expect(uncordon.stdout).toContain('node/n2 uncordoned');
    expect(api.server.store.get('nodes', undefined, 'n2').spec).not.toMatchObject({ unschedulable: true });
  });

  it('applies, lists and deletes a NodeMaintenance with validation on', async () => {
    await writeFile(join(dir, 'nm.yaml'), NM_YAML);

    const applied = await kubectl('apply', '-f', join(dir, 'nm.yaml'));
    const again = await kubectl('apply', '-f', join(dir, 'nm.yaml'));
    const listed = await kubectl('get', 'nm');
    const deleted = await kubectl('delete', 'nm', 'nm-n2');
    const after = await kubectl('get', 'nm', '-o', 'name');

    expect(applied.stdout).toContain('nodemaintenance.nodemaintenance.medik8s.io/nm-n2 created');
    expect(again.stdout).toContain('nm-n2 unchanged');
    expect(listed.stdout).toMatch(/^nm-n2\s+n2\s/m);
    expect(deleted.stdout).toContain('"nm-n2" deleted');
    expect(after.stdout).toBe('');
  });

  it('drains a node through the eviction API, leaving the DaemonSet pod', async () => {
    const drain = await kubectl(
      'drain',
      'n1',
      '--ignore-daemonsets',
      '--delete-emptydir-data',
      '--timeout=30s',
    );

    const left = api.server.store
      .list('pods', { fieldSelector: 'spec.nodeName=n1' })
      .map((p) => p.metadata.name);
    expect(drain.stdout).toContain('node/n1 cordoned');
    expect(drain.stdout).toContain('node/n1 drained');
    expect(drain.stderr).toContain('ignoring DaemonSet-managed Pods: kube-system/agent-n1');
    expect(left).toEqual(['agent-n1']);
    expect(api.server.requestLog.filter((r) => r.path.endsWith('/eviction')).map((r) => r.status)).toEqual([
      201, 201, 201,
    ]);
  });
});

describe.skipIf(!hasKubectl)('sandbox API server over HTTPS with a token, with stock kubectl', () => {
  it('gets nodes using the kubeconfig it writes', async () => {
    const api = await startApi({ tls: true, token: 'kubectl-token' });
    const dir = await mkdtemp(join(tmpdir(), 'drainer-kubectl-tls-'));
    try {
      await writeFile(join(dir, 'kubeconfig'), api.server.kubeconfig());
      api.server.store.create('nodes', node('secure-1'));

      const out = await kubectlIn(dir, 'get', 'nodes', '-o', 'name');

      expect(out.stdout.trim()).toBe('node/secure-1');
    } finally {
      await api.server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
