// Story: PodDisruptionBudgets stand in the way of the pod drain. drainer says which budget blocks
// which pod (Events), gives up at drain.timeout and ends Failed naming the pods that stayed.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeList } from '../../src/kube/types.ts';
import { smallWorld } from './scenario.ts';
import { finished, startStack, until, type EventObject, type Stack } from './stack.ts';

describe('pod drain blocked by PodDisruptionBudgets (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('a PodDisruptionBudget that blocks a pod: Event names the budget, the drain times out, Failed names the pod', async () => {
    const world = smallWorld({
      servers: 1,
      extra: {
        replicasets: [
          { name: 'db', namespace: 'shop', replicas: 1, nodes: ['node-a'], labels: { app: 'db' } },
        ],
        pdbs: [{ name: 'db-budget', namespace: 'shop', selector: { app: 'db' }, minAvailable: 1 }],
      },
    });
    stack = await startStack({
      scenario: world,
      config: { drain: { timeout: 1.5, evictionRetryInterval: 0.1 } },
    });
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await finished(stack, 'node-a');

    expect(rec.phase).toBe('Failed');
    expect(rec.lastError).toMatch(/drain failed: shop\/db-[a-z0-9]+/);
    const events = await stack.k.request<KubeList<EventObject>>({
      path: '/api/v1/events',
    });
    const blocked = events.items.filter(
      (e) => e.reason === 'EvictionBlocked' && e.involvedObject.kind === 'Node',
    );
    expect(blocked.length).toBeGreaterThan(0);
    expect(blocked[0]?.message).toContain('db-budget');
    expect(events.items.some((e) => e.reason === 'EvacuationFailed')).toBe(true);
  });

  it('a pod under two PodDisruptionBudgets fails the drain with the API server message', async () => {
    const world = smallWorld({
      servers: 1,
      extra: {
        replicasets: [
          {
            name: 'db',
            namespace: 'shop',
            replicas: 2,
            nodes: ['node-a'],
            labels: { app: 'db', tier: 'data' },
          },
        ],
        pdbs: [
          { name: 'by-app', namespace: 'shop', selector: { app: 'db' }, maxUnavailable: 1 },
          { name: 'by-tier', namespace: 'shop', selector: { tier: 'data' }, maxUnavailable: 1 },
        ],
      },
    });
    stack = await startStack({
      scenario: world,
      config: { drain: { timeout: 5, evictionRetryInterval: 0.1 } },
    });
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await finished(stack, 'node-a');

    expect(rec.phase).toBe('Failed');
    expect(rec.drain?.failed.length).toBeGreaterThan(0);
    expect(rec.drain?.failed[0]?.reason).toMatch(/more than one PodDisruptionBudget/i);
  });
});
