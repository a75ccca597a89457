import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drainSchema, type DrainConfig } from '../../src/config/schema.ts';
import { drainNode, type DrainOptions, type DrainProgress } from '../../src/kube/drain.ts';
import { DRAIN_MESSAGES } from '../../src/kube/drain-filters.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import type { KubeObject, PodRef } from '../../src/kube/types.ts';
import { silentLog, until } from './helpers.ts';
import { node, startFixture, type KubeFixture } from './sandbox.ts';

let f: KubeFixture;
beforeEach(async () => {
  f = await startFixture();
  f.server.store.create('nodes', node('n1'));
  f.server.store.create('nodes', node('n2'));
});
afterEach(() => f.close());

interface PodSpec {
  owner?: string;
  ownerName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  emptyDir?: boolean;
  grace?: number;
  nodeName?: string;
}

function pod(name: string, p: PodSpec = { owner: 'ReplicaSet' }): void {
  const metadata: Record<string, unknown> = { name, namespace: 'default', labels: p.labels ?? {} };
  if (p.annotations) metadata.annotations = p.annotations;
  if (p.owner) {
    metadata.ownerReferences = [
      {
        apiVersion: 'apps/v1',
        kind: p.owner,
        name: p.ownerName ?? `${name}-owner`,
        uid: `uid-${name}`,
        controller: true,
      },
    ];
  }
  f.server.store.create('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: {
      nodeName: p.nodeName ?? 'n1',
      terminationGracePeriodSeconds: p.grace ?? 0,
      containers: [{ name: 'c', image: 'x' }],
      volumes: p.emptyDir ? [{ name: 'scratch', emptyDir: {} }] : [],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
}

function daemonSet(name: string): void {
  f.server.store.create('daemonsets.apps', {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { ds: name } },
      template: { metadata: { labels: { ds: name } }, spec: { containers: [] } },
    },
  });
}

function pdb(name: string, app: string, disruptionsAllowed: number): void {
  f.server.store.create('poddisruptionbudgets.policy', {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: 'default' },
    spec: { minAvailable: 1, selector: { matchLabels: { app } } },
  });
  setBudget(name, disruptionsAllowed);
}

function setBudget(name: string, disruptionsAllowed: number): void {
  const cur = f.server.store.get('poddisruptionbudgets.policy', 'default', name);
  f.server.store.updateStatus('poddisruptionbudgets.policy', {
    ...cur,
    status: {
      disruptionsAllowed,
      currentHealthy: 1,
      desiredHealthy: 1,
      expectedPods: 1,
      observedGeneration: 1,
    },
  });
}

const podsOn = (nodeName: string): string[] =>
  (f.server.store.list('pods', { namespace: 'default' }) as KubeObject[])
    .filter((p) => (p.spec as { nodeName?: string }).nodeName === nodeName)
    .map((p) => p.metadata.name ?? '')
    .sort();

const names = (refs: readonly PodRef[]): string[] => refs.map((r) => r.name).sort();
const reasons = (list: readonly { pod: PodRef; reason: string }[]): Record<string, string> =>
  Object.fromEntries(list.map((i) => [i.pod.name, i.reason]));

function drain(config: Partial<DrainConfig> = {}, extra: Partial<DrainOptions> = {}) {
  return drainNode(f.k, {
    node: 'n1',
    config: drainSchema.parse({ evictionRetryInterval: 0.02, timeout: 10, ...config }),
    signal: new AbortController().signal,
    log: silentLog(),
    ...extra,
  });
}

describe('drainNode', () => {
  it('evicts replicated pods and leaves DaemonSet and mirror pods alone', async () => {
    daemonSet('agent');
    pod('web-1');
    pod('web-2');
    pod('agent-x', { owner: 'DaemonSet', ownerName: 'agent' });
    pod('static', { annotations: { 'kubernetes.io/config.mirror': 'abc' }, owner: 'Node', ownerName: 'n1' });
    pod('elsewhere', { nodeName: 'n2' });
    const progress: DrainProgress[] = [];

    const r = await drain({}, { onProgress: (p) => progress.push(p) });

    expect(r.succeeded).toBe(true);
    expect(names(r.evicted)).toEqual(['web-1', 'web-2']);
    expect(reasons(r.ignored)).toEqual({
      'agent-x': DRAIN_MESSAGES.daemonSetIgnored,
      static: DRAIN_MESSAGES.mirror,
    });
    expect(r.total).toBe(2);
    expect(podsOn('n1')).toEqual(['agent-x', 'static']);
    expect(podsOn('n2')).toEqual(['elsewhere']);
    expect(progress.at(-1)).toEqual({ total: 2, evicted: 2, pending: [] });
  });

  it('refuses pods with emptyDir data unless deleteEmptyDirData, evicting nothing', async () => {
    pod('web-1');
    pod('cache', { owner: 'ReplicaSet', emptyDir: true });

    const refused = await drain({ deleteEmptyDirData: false });
    expect(refused.succeeded).toBe(false);
    expect(reasons(refused.failed)).toEqual({ cache: DRAIN_MESSAGES.localStorageFatal });
    expect(podsOn('n1')).toEqual(['cache', 'web-1']);

    const allowed = await drain({ deleteEmptyDirData: true });
    expect(allowed.succeeded).toBe(true);
    expect(reasons(allowed.warnings)).toEqual({ cache: DRAIN_MESSAGES.localStorageWarning });
    expect(podsOn('n1')).toEqual([]);
  });

  it('fails on pods without a controller unless force is set', async () => {
    pod('web-1');
    pod('bare', {});

    const refused = await drain();
    expect(refused.succeeded).toBe(false);
    expect(reasons(refused.failed)).toEqual({ bare: DRAIN_MESSAGES.unmanagedFatal });
    expect(podsOn('n1')).toEqual(['bare', 'web-1']);

    const forced = await drain({ force: true });
    expect(forced.succeeded).toBe(true);
    expect(podsOn('n1')).toEqual([]);
  });

  it('leaves pods a plugin handles and honours podSelector', async () => {
    pod('virt-launcher-vm1', {
      owner: 'VirtualMachineInstance',
      labels: { 'kubevirt.io': 'virt-launcher', tier: 'a' },
    });
    pod('web-1', { owner: 'ReplicaSet', labels: { tier: 'a' } });
    pod('db-1', { owner: 'ReplicaSet', labels: { tier: 'b' } });

    const r = await drain(
      { podSelector: 'tier=a' },
      {
        skipPod: (p) =>
          p.metadata.labels?.['kubevirt.io'] === 'virt-launcher' ? 'migrated by kubevirt' : undefined,
      },
    );

    expect(r.succeeded).toBe(true);
    expect(names(r.evicted)).toEqual(['web-1']);
    expect(reasons(r.ignored)).toEqual({ 'virt-launcher-vm1': 'migrated by kubevirt' });
    expect(podsOn('n1')).toEqual(['db-1', 'virt-launcher-vm1']);
  });

  it('retries a PDB-blocked pod and aggregates one EvictionBlocked Event naming the budget', async () => {
    pod('web-1', { owner: 'ReplicaSet', labels: { app: 'web' } });
    pdb('web-pdb', 'web', 0);
    const events = new EventRecorder({ k: f.k, log: silentLog(), host: 'n1' });
    const nodeRef = { apiVersion: 'v1', kind: 'Node', name: 'n1' };
    const blockedEvents = () =>
      (f.server.store.list('events', { namespace: 'default' }) as KubeObject[]).filter(
        (e) => e.reason === 'EvictionBlocked' && (e.involvedObject as { kind: string }).kind === 'Node',
      );

    const draining = drain({}, { events, involved: [nodeRef] });
    await until(() => blockedEvents().some((e) => (e.count as number) >= 3), 'repeated EvictionBlocked');
    setBudget('web-pdb', 1);
    const r = await draining;

    expect(r.succeeded).toBe(true);
    const [ev, ...more] = blockedEvents();
    expect(more).toEqual([]);
    expect(ev?.message).toContain('web-pdb');
    expect(ev?.message).toContain('default/web-1');
  });

  it('fails the pod covered by two budgets and still evicts the others', async () => {
    pod('web-1', { owner: 'ReplicaSet', labels: { app: 'web' } });
    pod('other', { owner: 'ReplicaSet' });
    pdb('pdb-a', 'web', 1);
    pdb('pdb-b', 'web', 1);

    const r = await drain();

    expect(r.succeeded).toBe(false);
    expect(names(r.evicted)).toEqual(['other']);
    expect(reasons(r.failed)['web-1']).toContain('more than one PodDisruptionBudget');
  });

  it('reports the pods left when the drain times out', async () => {
    pod('web-1', { owner: 'ReplicaSet', labels: { app: 'web' } });
    pod('slow', { owner: 'ReplicaSet', grace: 30 });
    pdb('web-pdb', 'web', 0);

    const r = await drain({ timeout: 0.4 });

    expect(r.succeeded).toBe(false);
    const why = reasons(r.failed);
    expect(Object.keys(why).sort()).toEqual(['slow', 'web-1']);
    expect(why['web-1']).toContain('web-pdb');
    expect(why.slow).toContain('waiting for the Pod to be deleted');
  });

  it('waits for deletions to finish, confirmed by the watch', async () => {
    pod('slow', { owner: 'ReplicaSet', grace: 30 });
    let evicted = false;
    const draining = drain({}, { onProgress: (p) => (evicted ||= p.evicted === 0 && p.total === 1) });
    const terminating = () => f.server.store.get('pods', 'default', 'slow').metadata.deletionTimestamp;
    await until(terminating, 'the eviction to start the deletion');
    f.server.store.delete('pods', 'default', 'slow', { gracePeriodSeconds: 0 });
    const r = await draining;
    expect(r.succeeded).toBe(true);
    expect(names(r.evicted)).toEqual(['slow']);
    expect(evicted).toBe(true);
  });

  it('waits for a pod already terminating without evicting it again', async () => {
    pod('leaving', { owner: 'ReplicaSet', grace: 30 });
    f.server.store.delete('pods', 'default', 'leaving');
    const draining = drain();
    await until(
      () => f.server.requestLog.some((r) => r.path.includes('/pods') && r.path.includes('watch')),
      'the watch',
    );
    f.server.store.delete('pods', 'default', 'leaving', { gracePeriodSeconds: 0 });
    const r = await draining;
    expect(r.succeeded).toBe(true);
    expect(names(r.evicted)).toEqual(['leaving']);
    expect(f.server.requestLog.filter((e) => e.path.endsWith('/eviction'))).toEqual([]);
  });

  it("passes gracePeriodSeconds in the Eviction's deleteOptions", async () => {
    pod('slow', { owner: 'ReplicaSet', grace: 30 });
    const r = await drain({ gracePeriodSeconds: 0 });
    expect(r.succeeded).toBe(true);
    expect(podsOn('n1')).toEqual([]);
  });
});
