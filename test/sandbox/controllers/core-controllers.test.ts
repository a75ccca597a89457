import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { cordon, evict, podsOn, sandbox, statusOf, taint, waitFor } from './helpers.ts';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('kubelet', () => {
  it('finishes a pod deletion only after its grace period', async () => {
    sb = await sandbox({ pods: [{ name: 'slow', node: 'node-1', graceSeconds: 20 }] }, ['kubelet']);
    sb.kube.store.delete('pods', 'default', 'slow');

    const terminating = sb.kube.store.get('pods', 'default', 'slow');
    expect(terminating.metadata.deletionTimestamp).toBeDefined();
    expect(terminating.metadata.deletionGracePeriodSeconds).toBe(20);
    // A quarter of the grace period later (5 simulated seconds) the pod is still terminating.
    await sb.clock.sleep(5000);
    expect(sb.kube.store.find('pods', 'default', 'slow')).toBeDefined();
    await waitFor(() => !sb!.kube.store.find('pods', 'default', 'slow'));
  });

  it('starts a pod bound to a node: Running with Ready conditions', async () => {
    sb = await sandbox({}, ['kubelet']);
    sb.kube.store.create('pods', {
      metadata: { name: 'new', namespace: 'default' },
      spec: { nodeName: 'node-2', containers: [{ name: 'c', image: 'x' }] },
    });

    const pod = await waitFor(() => {
      const p = sb!.kube.store.get('pods', 'default', 'new');
      return statusOf(p).phase === 'Running' && p;
    });
    expect(statusOf(pod).conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]),
    );
    expect(statusOf(pod).podIP).toMatch(/^10\.244\./);
  });
});

describe('replicaset controller', () => {
  it('recreates an evicted pod on a schedulable node only', async () => {
    sb = await sandbox(
      {
        nodes: [{ name: 'node-1' }, { name: 'node-2' }, { name: 'node-3' }],
        replicasets: [
          { name: 'web', replicas: 3, labels: { app: 'web' }, nodes: ['node-1', 'node-1', 'node-2'] },
        ],
      },
      ['kubelet', 'replicaset', 'nodeLifecycle'],
    );
    cordon(sb, 'node-1');
    taint(sb, 'node-2', 'example.com/dedicated');
    const victim = podsOn(sb, 'node-1', 'app=web')[0]!;

    const { code } = await evict(sb, 'default', victim.metadata.name!);

    expect(code).toBe(201);
    const replacement = await waitFor(() =>
      sb!.kube.store
        .list('pods', { labelSelector: 'app=web' })
        .find((p) => !['node-1', 'node-2'].includes((p.spec as { nodeName?: string }).nodeName ?? 'x')),
    );
    expect((replacement.spec as { nodeName: string }).nodeName).toBe('node-3');
    await waitFor(
      () => statusOf(sb!.kube.store.get('replicasets.apps', 'default', 'web')).readyReplicas === 3,
    );
    expect(statusOf(sb.kube.store.get('replicasets.apps', 'default', 'web')).replicas).toBe(3);
  });

  it('waits without creating a pod while no node can take it', async () => {
    sb = await sandbox(
      {
        nodes: [{ name: 'node-1' }, { name: 'node-2' }],
        replicasets: [{ name: 'db', replicas: 1, nodes: ['node-1'] }],
      },
      ['kubelet', 'replicaset'],
    );
    cordon(sb, 'node-2');
    cordon(sb, 'node-1');
    const [pod] = podsOn(sb, 'node-1');
    sb.kube.store.delete('pods', 'default', pod!.metadata.name!, { gracePeriodSeconds: 0 });
    await new Promise((r) => setTimeout(r, 50));
    expect(sb.kube.store.list('pods')).toHaveLength(0);

    cordon(sb, 'node-2', false);

    const placed = await waitFor(() => sb!.kube.store.list('pods')[0]);
    expect((placed.spec as { nodeName: string }).nodeName).toBe('node-2');
  });
});

describe('disruption controller', () => {
  const budgets = {
    replicasets: [
      { name: 'web', replicas: 4, labels: { app: 'web' } },
      { name: 'api', replicas: 5, labels: { app: 'api' } },
    ],
    pdbs: [
      { name: 'web', selector: { app: 'web' }, minAvailable: '50%' },
      { name: 'api', selector: { app: 'api' }, maxUnavailable: '25%' },
    ],
  };

  it('computes PDB status from percentages', async () => {
    sb = await sandbox(budgets, ['disruption']);
    const status = (name: string) =>
      statusOf(sb!.kube.store.get('poddisruptionbudgets.policy', 'default', name));

    await waitFor(() => status('web').observedGeneration === 1 && status('api').observedGeneration === 1);

    expect(status('web')).toMatchObject({
      expectedPods: 4,
      desiredHealthy: 2,
      currentHealthy: 4,
      disruptionsAllowed: 2,
    });
    // 25% of 5 rounds up to 2 unavailable → 3 must stay healthy
    expect(status('api')).toMatchObject({
      expectedPods: 5,
      desiredHealthy: 3,
      currentHealthy: 5,
      disruptionsAllowed: 2,
    });
  });

  it('counts a disrupted pod as unhealthy while it exists, then clears the mark', async () => {
    sb = await sandbox(budgets, ['disruption', 'kubelet']);
    const get = () => sb!.kube.store.get('poddisruptionbudgets.policy', 'default', 'web');
    await waitFor(() => statusOf(get()).observedGeneration === 1);
    const victim = sb.kube.store.list('pods', { labelSelector: 'app=web' })[0]!.metadata.name!;
    // What the Eviction API records before the pod's deletion is seen.
    const pdb = get();
    sb.kube.store.updateStatus('poddisruptionbudgets.policy', {
      ...pdb,
      status: { ...statusOf(pdb), disruptedPods: { [victim]: new Date().toISOString() } },
    });

    await waitFor(() => statusOf(get()).currentHealthy === 3);
    expect(statusOf(get()).disruptedPods).toHaveProperty(victim);
    sb.kube.store.delete('pods', 'default', victim, { gracePeriodSeconds: 0 });

    await waitFor(() => statusOf(get()).disruptedPods === undefined);
    expect(statusOf(get())).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
  });

  it('lets an eviction through the budget and recomputes it', async () => {
    sb = await sandbox(budgets, ['disruption', 'kubelet']);
    const get = () => statusOf(sb!.kube.store.get('poddisruptionbudgets.policy', 'default', 'web'));
    await waitFor(() => get().observedGeneration === 1);
    const victim = sb.kube.store.list('pods', { labelSelector: 'app=web' })[0]!.metadata.name!;

    expect((await evict(sb, 'default', victim)).code).toBe(201);

    await waitFor(() => !sb!.kube.store.find('pods', 'default', victim));
    await waitFor(() => get().currentHealthy === 3);
    expect(get()).toMatchObject({ expectedPods: 4, desiredHealthy: 2, disruptionsAllowed: 1 });
  });
});

describe('node lifecycle controller', () => {
  it('adds the unschedulable taint on cordon and removes it on uncordon', async () => {
    sb = await sandbox({}, ['nodeLifecycle']);
    const taints = () =>
      (
        sb!.kube.store.get('nodes', undefined, 'node-1').spec as {
          taints?: { key: string; effect: string }[];
        }
      ).taints ?? [];

    cordon(sb, 'node-1');
    await waitFor(() => taints().some((t) => t.key === 'node.kubernetes.io/unschedulable'));
    expect(taints()).toEqual([
      expect.objectContaining({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }),
    ]);

    cordon(sb, 'node-1', false);
    await waitFor(() => taints().length === 0);
  });
});
