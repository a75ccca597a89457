// Story: NodeMaintenance objects drive the node in mode "own": drainer takes the CR (finalizer),
// cordons, evacuates, reports status, and on deletion undoes its changes and lets the CR go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAINTENANCE_FINALIZER } from '../../src/core/agent/desired.ts';
import type { NodeMaintenance } from '../../src/kube/types.ts';
import { NM_PATH, nodeMaintenance, smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

describe('NodeMaintenance (full stack, mode own)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }) });
    const a = stack.startAgent('node-a');
    const b = stack.startAgent('node-b');
    await until('agents ready', () => a.agent.ready().ready && b.agent.ready().ready);
  });
  afterAll(async () => stack?.close());

  const create = (name: string, node: string) =>
    stack.k.request<NodeMaintenance>({ method: 'POST', path: NM_PATH, body: nodeMaintenance(name, node) });
  const get = (name: string) => stack.k.request<NodeMaintenance>({ path: `${NM_PATH}/${name}` });
  const remove = (name: string) => stack.k.request({ method: 'DELETE', path: `${NM_PATH}/${name}` });
  const gone = async (name: string) => {
    try {
      await get(name);
      return false;
    } catch {
      return true;
    }
  };

  it('a NodeMaintenance on a schedulable node: finalizer, cordon, evacuation, status Succeeded', async () => {
    await create('nm-a', 'node-a');
    const nm = await until('Succeeded', async () => {
      const cur = await get('nm-a');
      return cur.status?.phase === 'Succeeded' || cur.status?.phase === 'Failed' ? cur : undefined;
    });

    expect(nm.status).toMatchObject({ phase: 'Succeeded', drainProgress: 100, lastError: '' });
    expect(nm.status?.lastUpdate).toEqual(expect.any(String));
    expect(nm.metadata.finalizers).toContain(MAINTENANCE_FINALIZER);
    expect((await stack.node('node-a')).spec?.unschedulable).toBe(true);
    expect(await stack.record('node-a')).toMatchObject({
      trigger: 'NodeMaintenance/nm-a',
      cordonedByUs: true,
    });
    expect(stack.sandbox.openstack.state.serversOnHost('node-a')).toEqual([]);
  });

  it('a second NodeMaintenance for the same node fails; the first stays in charge', async () => {
    await create('nm-a-again', 'node-a');
    const dup = await until('duplicate marked', async () => {
      const cur = await get('nm-a-again');
      return cur.status?.phase === 'Failed' ? cur : undefined;
    });
    expect(dup.status?.lastError).toMatch(/a NodeMaintenance for node node-a already exists/);
    expect(dup.metadata.finalizers ?? []).not.toContain(MAINTENANCE_FINALIZER);
    await remove('nm-a-again');
    expect((await get('nm-a')).status?.phase).toBe('Succeeded');
  });

  it('deleting it restores the node: uncordoned (we cordoned it), service enabled, CR gone', async () => {
    await remove('nm-a');
    await until('NodeMaintenance released', () => gone('nm-a'));
    // the finalizer goes in the restore's last steps, beside the record: wait for both (the record
    // was seen a moment after the CR under load)
    await until('node-a restored', async () => (await stack.record('node-a')) === undefined);

    expect((await stack.node('node-a')).spec?.unschedulable).toBeFalsy();
    expect(stack.sandbox.openstack.state.service('node-a')?.status).toBe('enabled');
  });

  it('a node cordoned by a human before the NodeMaintenance stays cordoned after it is deleted', async () => {
    await stack.cordon('node-b');
    await until('evacuated by cordon', async () => (await stack.record('node-b'))?.phase === 'Evacuated');
    await create('nm-b', 'node-b');
    await until('taken', async () => (await get('nm-b')).status?.phase === 'Succeeded');

    await remove('nm-b');
    await until('NodeMaintenance released', () => gone('nm-b'));

    expect((await stack.node('node-b')).spec?.unschedulable).toBe(true);
    expect(await stack.record('node-b')).toMatchObject({ phase: 'Evacuated', trigger: 'cordon' });
    await stack.cordon('node-b', false);
    await until('node-b restored', async () => (await stack.record('node-b')) === undefined);
  });

  it('a NodeMaintenance for a node that does not exist is marked Failed by some agent', async () => {
    await create('nm-ghost', 'node-zz');
    const nm = await until('marked', async () => {
      const cur = await get('nm-ghost');
      return cur.status?.phase === 'Failed' ? cur : undefined;
    });
    expect(nm.status?.lastError).toBe('node node-zz does not exist');
    await remove('nm-ghost');
  });
});
