// Story: an operator cordons a node; drainer moves its Nova servers, then evicts its pods; an
// uncordon puts back exactly what drainer changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVACUATING_TAINT } from '../../src/core/record/record.ts';
import type { KubeList, KubePod } from '../../src/kube/types.ts';
import type { EventObject } from './stack.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type RunningAgent, type Stack } from './stack.ts';

describe('cordon and uncordon (full stack)', () => {
  let stack: Stack;
  let agent: RunningAgent;
  beforeAll(async () => {
    stack = await startStack({ scenario: smallWorld() });
    agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
  });
  afterAll(async () => stack?.close());

  const podsOn = async (node: string) =>
    (
      await stack.k.request<KubeList<KubePod>>({
        path: '/api/v1/pods',
        query: { fieldSelector: `spec.nodeName=${node}` },
      })
    ).items.filter((p) => !p.metadata.deletionTimestamp);

  it('cordon: every server leaves the hypervisor, then only DaemonSet pods stay, phase Evacuated', async () => {
    const os = stack.sandbox.openstack.state;
    expect(os.serversOnHost('node-a')).toHaveLength(5);

    await stack.cordon('node-a');
    const rec = await until('evacuated', async () => {
      const r = await stack.record('node-a');
      return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
    });

    expect(rec.lastError).toBeUndefined();
    expect(rec.phase).toBe('Evacuated');
    expect(os.serversOnHost('node-a')).toEqual([]);
    expect(os.service('node-a')).toMatchObject({
      status: 'disabled',
      disabledReason: expect.stringMatching(/^drainer:/),
    });
    const left = await podsOn('node-a');
    expect(left.map((p) => p.metadata.ownerReferences?.[0]?.kind)).toEqual(['DaemonSet']);
    // the record says how the pod drain went, for drainer status (a cordon has no NodeMaintenance)
    expect(rec.pods?.total).toBeGreaterThan(0);
    expect(rec.pods).toEqual({ total: rec.pods?.total, evicted: rec.pods?.total, failed: 0 });
    const node = await stack.node('node-a');
    expect(node.spec?.taints).toContainEqual(expect.objectContaining({ key: EVACUATING_TAINT.key }));
    // every server was asked to move exactly once
    for (const s of os.servers()) expect(os.migrateCalls(s.id)).toBe(1);
    const metrics = await agent.metrics.text();
    expect(metrics).toMatch(/drainer_evacuations_total\{result="succeeded"\} 1/);
    expect(metrics).toMatch(/drainer_node_phase\{phase="Evacuated"\} 1/);
  });

  it('uncordon: service enabled again, our taint and annotation gone', async () => {
    await stack.cordon('node-a', false);
    await until('restored', async () => (await stack.record('node-a')) === undefined);

    const os = stack.sandbox.openstack.state;
    expect(os.service('node-a')).toMatchObject({ status: 'enabled' });
    const node = await stack.node('node-a');
    expect(node.spec?.taints ?? []).not.toContainEqual(
      expect.objectContaining({ key: EVACUATING_TAINT.key }),
    );
    expect(node.metadata.annotations?.['drainer.dev/state']).toBeUndefined();
    expect(node.spec?.unschedulable).toBeFalsy();
  });

  it('recorded the story as Events on the Node', async () => {
    const events = await stack.k.request<KubeList<EventObject>>({
      path: '/api/v1/namespaces/default/events',
    });
    const reasons = new Set(
      events.items
        .filter((e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === 'node-a')
        .map((e) => e.reason),
    );
    for (const r of [
      'EvacuationPlanned',
      'EvacuationStarted',
      'MigrationStarted',
      'MigrationSucceeded',
      'DrainStarted',
      'DrainSucceeded',
      'EvacuationSucceeded',
      'RestoreSucceeded',
    ]) {
      expect(reasons, r).toContain(r);
    }
  });
});
