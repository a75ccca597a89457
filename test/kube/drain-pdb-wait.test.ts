import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drainSchema, type DrainConfig } from '../../src/config/schema.ts';
import { drainNode } from '../../src/kube/drain.ts';
import { silentLog, until } from './helpers.ts';
import { node, startFixture, type KubeFixture } from './sandbox.ts';

const PDB = 'poddisruptionbudgets.policy';
let f: KubeFixture;
beforeEach(async () => {
  f = await startFixture();
  f.server.store.create('nodes', node('n1'));
});
afterEach(() => f.close());

function webPod(name: string): void {
  f.server.store.create('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'web' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'u', controller: true },
      ],
    },
    spec: { nodeName: 'n1', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'x' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
}

function setBudget(disruptionsAllowed: number): void {
  const cur = f.server.store.get(PDB, 'default', 'web-pdb');
  f.server.store.updateStatus(PDB, {
    ...cur,
    status: {
      disruptionsAllowed,
      currentHealthy: 2,
      desiredHealthy: 1,
      expectedPods: 2,
      observedGeneration: 1,
    },
  });
}

function webBudget(disruptionsAllowed: number): void {
  f.server.store.create(PDB, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web-pdb', namespace: 'default' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
  });
  setBudget(disruptionsAllowed);
}

const drain = (config: Partial<DrainConfig>) =>
  drainNode(f.k, {
    node: 'n1',
    config: drainSchema.parse(config),
    signal: new AbortController().signal,
    log: silentLog(),
  });

/** The eviction requests, with their place in the API server's request log. */
const evictions = () =>
  f.server.requestLog
    .map((r, at) => ({ at, path: r.path, status: r.status }))
    .filter((r) => r.path.endsWith('/eviction'));

const webPodsLeft = () => f.server.store.list('pods', { namespace: 'default' }).length;

describe('a drain blocked by a PodDisruptionBudget', () => {
  it('retries the blocked pod as soon as the budget allows a disruption, long before the retry interval', async () => {
    webPod('web-a');
    webPod('web-b');
    webBudget(1);

    const draining = drain({ evictionRetryInterval: 60, timeout: 60 });
    await until(
      () =>
        webPodsLeft() === 1 &&
        evictions().some((e) => e.status === 429) &&
        f.server.requestLog.some((r) => r.path.includes('poddisruptionbudgets') && r.path.includes('watch=')),
      'one pod evicted, the other blocked, the budgets watched',
    );
    const [first] = f.server.store.list('pods', { namespace: 'default' }).map((p) => p.metadata.name);
    const changedAt = f.server.requestLog.length;
    setBudget(1);
    const r = await draining;

    expect(r.succeeded).toBe(true);
    expect(r.evicted.map((p) => p.name)).toEqual([first === 'web-a' ? 'web-b' : 'web-a', first]);
    const log = evictions();
    expect(log.map((e) => e.status).sort()).toEqual([201, 201, 429]);
    const retry = log.at(-1);
    expect(retry?.path).toContain(`/pods/${first}/eviction`);
    expect(retry?.status).toBe(201);
    expect(retry?.at).toBeGreaterThanOrEqual(changedAt);
  });

  it('still retries every retry interval while the budget does not change', async () => {
    webPod('web-a');
    webBudget(0);

    const r = await drain({ evictionRetryInterval: 0.05, timeout: 0.6 });

    expect(r.succeeded).toBe(false);
    expect(r.failed.map((p) => p.pod.name)).toEqual(['web-a']);
    expect(evictions().filter((e) => e.status === 429).length).toBeGreaterThanOrEqual(3);
  });

  it('retries at once when the blocking budget is deleted', async () => {
    webPod('web-a');
    webBudget(0);

    const draining = drain({ evictionRetryInterval: 60, timeout: 60 });
    await until(
      () =>
        f.server.requestLog.some((r) => r.path.includes('poddisruptionbudgets') && r.path.includes('watch=')),
      'the budgets watched',
    );
    f.server.store.delete(PDB, 'default', 'web-pdb');
    const r = await draining;

    expect(r.succeeded).toBe(true);
    expect(evictions().map((e) => e.status)).toEqual([429, 201]);
  });
});
