// Story: the capacity pre-flight on the full stack. node-a holds three 8 GiB servers, node-b has
// room for one. enforce: a NodeMaintenance is refused before the first change; a host that comes
// into service later lets it proceed at the next resync. warn: the same shortfall is an Event and
// the evacuation goes on.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../cli/harness.ts';
import { EVACUATING_TAINT } from '../../src/core/record/record.ts';
import type { NodeMaintenance } from '../../src/kube/types.ts';
import { NM_PATH, nodeMaintenance, smallWorld } from './scenario.ts';
import { nodeEvents, startStack, until, type Stack } from './stack.ts';

const tight = () => {
  const world = smallWorld({ servers: 3, migrationSeconds: 4 });
  return {
    ...world,
    openstack: {
      ...world.openstack,
      hosts: [
        { name: 'node-a', ramMb: 65536 },
        { name: 'node-b', ramMb: 16384 },
      ],
      servers: world.openstack.servers.map((s) => ({ ...s, ramMb: 8192, vcpus: 2 })),
    },
  };
};

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('capacity pre-flight (full stack)', () => {
  it('enforce: refuses with nothing changed, then proceeds at the next resync once a host is back', async () => {
    stack = await startStack({ scenario: tight() });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const agent = s.startAgent('node-a', { resyncInterval: 1 });
    await until('agent ready', () => agent.agent.ready().ready);

    await s.k.request({ method: 'POST', path: NM_PATH, body: nodeMaintenance('nm-a', 'node-a') });
    const nm = await until('NodeMaintenance Failed', async () => {
      const cur = await s.k.request<NodeMaintenance>({ path: `${NM_PATH}/nm-a` });
      return cur.status?.phase === 'Failed' ? cur : undefined;
    });

    const shortfall =
      /^nova: 2 of 3 servers do not fit: vm-\d \(2 vCPU, 8 GiB RAM, 10 GB disk\): the largest room on one other host is [^;]*; .* short in total$/;
    expect(nm.status?.lastError).toMatch(shortfall);
    // the medik8s schema has no conditions (a real API server prunes them): lastError carries it
    expect(nm.status?.conditions).toBeUndefined();
    const rec = await s.record('node-a');
    expect(rec).toMatchObject({ phase: 'Failed', failureReason: 'InsufficientCapacity', taintedByUs: false });
    // nothing changed: service enabled, not cordoned, no taint, every server home
    expect(os.service('node-a')?.status).toBe('enabled');
    const node = await s.node('node-a');
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(node.spec?.taints ?? []).not.toContainEqual(
      expect.objectContaining({ key: EVACUATING_TAINT.key }),
    );
    expect(os.serversOnHost('node-a')).toHaveLength(3);
    expect(os.servers().every((sv) => os.migrateCalls(sv.id) === 0)).toBe(true);
    expect(await nodeEvents(s, 'node-a', 'InsufficientCapacity')).toEqual([expect.stringMatching(shortfall)]);

    // a host comes (back) into service: the next resync finds room and evacuates
    os.addHost({ name: 'node-c', ramMb: 65536 });
    const done = await until(
      'Evacuated after the resync',
      async () => ((await s.record('node-a'))?.phase === 'Evacuated' ? s.record('node-a') : undefined),
      30_000,
    );
    expect(done?.lastError).toBeUndefined();
    expect(os.serversOnHost('node-a')).toEqual([]);
    expect(os.service('node-a')?.status).toBe('disabled');
  });

  it('warn: the shortfall is an Event and the evacuation goes on', async () => {
    stack = await startStack({ scenario: tight() });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const agent = s.startAgent('node-a', { evacuation: { capacityCheck: 'warn' } });
    await until('agent ready', () => agent.agent.ready().ready);

    await s.cordon('node-a');
    await until(
      'the service disabled (the evacuation started)',
      () => os.service('node-a')?.status === 'disabled',
    );

    expect(await nodeEvents(s, 'node-a', 'InsufficientCapacity')).toEqual([
      expect.stringMatching(/^nova: 2 of 3 servers do not fit: /),
    ]);
    expect(await nodeEvents(s, 'node-a', 'EvacuationStarted')).toHaveLength(1);
    await until('a server moved', () => os.serversOnHost('node-b').length > 0);
  });

  it('run-once on Kubernetes: exit 1 with InsufficientCapacity, the node as it was', async () => {
    stack = await startStack({ scenario: tight() });
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-capacity-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, stack.sandbox.kube.kubeconfig());
    const config = { ...stack.sandbox.drainerConfig, kubeconfig, logLevel: 'warn' };

    const result = await cli({ files: { 'config.yaml': yaml.dump(config) } })('run-once', '--node', 'node-a');

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/node node-a: Failed \(trigger run-once\)/);
    expect(result.stdout).toMatch(/error \(InsufficientCapacity\): nova: 2 of 3 servers do not fit: /);
    expect(stack.sandbox.openstack.state.service('node-a')?.status).toBe('enabled');
    expect((await stack.node('node-a')).spec?.unschedulable).toBeFalsy();
  });
});
