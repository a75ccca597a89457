// Story: an operator without the daemon runs `drainer run-once --cordon` against the cluster, then
// `drainer restore`: the same reconcile, once, with the record on the Node.
import { gateName } from '../../src/kube/gate.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smallWorld } from './scenario.ts';
import { startStack, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';
import { microTime } from '../../src/core/fleet/budget.ts';

describe('run-once and restore on Kubernetes (full stack)', () => {
  let stack: Stack;
  let run: ReturnType<typeof stackCli>;
  beforeAll(async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }) });
    run = stackCli(stack, {
      logLevel: 'warn',
      nova: { pollInterval: 0.05 },
      drain: { evictionRetryInterval: 0.1, timeout: 20 },
    });
  });
  afterAll(async () => stack?.close());

  it('run-once --cordon cordons, moves the servers, drains, records Evacuated and exits 0', async () => {
    const result = await run('run-once', '--node', 'node-a', '--cordon');

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/node node-a: Evacuated \(trigger cordon\)/);
    expect(result.stdout).toMatch(/nova: done, 2 moved/);
    expect(stack.sandbox.openstack.state.serversOnHost('node-a')).toEqual([]);
    expect(await stack.record('node-a')).toMatchObject({ phase: 'Evacuated', cordonedByUs: false });
    // run-once honours the drain gate: evacuated, so no gate pod holds a drain
    expect(stack.sandbox.kube.store.find('pods', 'drainer', gateName('node-a'))).toBeUndefined();
  });

  it('restore removes taint and record and leaves the operator cordon; nova-compute stays disabled while the node is cordoned', async () => {
    const result = await run('restore', '--node', 'node-a');

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/nova: restored/);
    // still cordoned, a drain of it may run: Nova places nothing there until the node is back in service
    expect(stack.sandbox.openstack.state.service('node-a')?.status).toBe('disabled');
    expect(await stack.record('node-a')).toBeUndefined();
    const node = await stack.node('node-a');
    expect(node.spec?.taints ?? []).not.toContainEqual(
      expect.objectContaining({ key: 'drainer.dev/evacuating' }),
    );
    expect(node.spec?.unschedulable).toBe(true);
    // the restore holds the drain gate again before the node takes VMs
    expect(stack.sandbox.kube.store.find('pods', 'drainer', gateName('node-a'))?.spec).toMatchObject({
      nodeName: 'node-a',
    });
  });

  it('run-once took the fleet slot and gave it back; --no-budget passes a slot someone else holds', async () => {
    const leases = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases';
    const slot = await stack.k.request<{
      metadata: { resourceVersion: string };
      spec: { holderIdentity?: string };
    }>({
      path: `${leases}/drainer-evacuation-0`,
    });
    expect(slot.spec.holderIdentity).toBeUndefined(); // taken by the first run-once, given back
    const now = microTime(new Date());
    await stack.k.request({
      method: 'PUT',
      path: `${leases}/drainer-evacuation-0`,
      body: {
        ...slot,
        spec: { holderIdentity: 'node-b', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
      },
    });

    const result = await run('run-once', '--node', 'node-a', '--no-budget');

    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/--no-budget: evacuating without a fleet slot/);
    expect(await stack.record('node-a')).toMatchObject({ phase: 'Evacuated' });
    const after = await stack.k.request<{ spec: { holderIdentity?: string } }>({
      path: `${leases}/drainer-evacuation-0`,
    });
    expect(after.spec.holderIdentity).toBe('node-b');
    expect((await run('restore', '--node', 'node-a')).code).toBe(0);
  });

  it('names a node the cluster does not have and exits 2', async () => {
    const result = await run('run-once', '--node', 'node-zz');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/node-zz/);
  });
});
