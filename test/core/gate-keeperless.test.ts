// Story (issue 48 item 2): the operator takes drainer's agent off node-1 the documented way, a
// `drainer.dev/agent=disabled` label that the DaemonSet's node affinity excludes. The agent stops,
// and no successor will come. A gate left up would make `kubectl drain node-1` wait until its
// timeout, and nobody would ever open it: the stopping agent removes it (pod and PDB) when nothing
// is left on the node to protect. With VMs still there (or nobody knows), it stays, for `drainer
// doctor` to name and `drainer release` to open. A plain restart (the DaemonSet still places a pod
// there) keeps the gate, as before.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { gateKeeper } from '../../src/core/gate/keeper.ts';
import { kubeGateApi } from '../../src/core/gate/kube-port.ts';
import type { Remaining } from '../../src/core/gate/remaining.ts';
import { silentLog } from '../kube/helpers.ts';
import { runbookDaemonSet } from '../kube/agent-daemonset.ts';
import { gateObjects as gateObjectsOf } from '../kube/gate-objects.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';

const NS = 'drainer';
const DS = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
const MERGE = 'application/merge-patch+json';

describe('the gate of a node whose agent stops for good', () => {
  let fx: KubeFixture;
  beforeEach(async () => {
    fx = await startFixture();
    await fx.k.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
    await fx.k.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: node('node-1', { metadata: { name: 'node-1', labels: { 'openstack-compute-node': 'enabled' } } }),
    });
    await fx.k.request({
      method: 'POST',
      path: DS,
      body: runbookDaemonSet({ nodeSelector: { 'openstack-compute-node': 'enabled' } }),
    });
  });
  afterEach(async () => fx.close());

  const gateObjects = () => gateObjectsOf(fx, 'node-1', NS);

  /** The node's agent, its gate held; `left` is what its plugins find on the host at the stop. */
  async function agentWithGate(left: Remaining, noSuccessor?: () => Promise<void>) {
    const log = silentLog();
    const api = kubeGateApi({ k: fx.k, namespace: NS, daemonSet: 'drainer', image: 'pause', log });
    const gate = new DrainGate({ api, log, podOf: (n) => ({ namespace: NS, name: n }) });
    await gate.set('node-1', true);
    const keeper = gateKeeper({
      k: fx.k,
      namespace: NS,
      nodeName: 'node-1',
      gate,
      uninstalled: () => api.uninstalled?.() ?? Promise.resolve(false),
      successorExpected: () => api.successorExpected?.('node-1') ?? Promise.resolve(true),
      drop: () => api.drop?.('node-1') ?? Promise.resolve(),
      leftOnNode: async () => left,
      ...(noSuccessor ? { noSuccessor } : {}),
      log,
      successorWaitMs: 5,
    });
    return keeper;
  }

  const disableAgent = () =>
    fx.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-1',
      contentType: MERGE,
      body: { metadata: { labels: { 'drainer.dev/agent': 'disabled' } } },
    });

  it('labelled drainer.dev/agent=disabled with no VM left: the stopping agent removes its gate, pod and PDB', async () => {
    const keeper = await agentWithGate({ names: [] });
    expect(await gateObjects()).toHaveLength(2);
    await disableAgent();

    await keeper.atStop();

    expect(await gateObjects()).toEqual([]);
  });

  it('labelled drainer.dev/agent=disabled with VMs still on the host: the gate stays and holds drains', async () => {
    const keeper = await agentWithGate({ names: ['nova/web-1'] });
    await disableAgent();

    await keeper.atStop();

    expect(await gateObjects()).toHaveLength(2);
  });

  it('tells the agent that no successor comes (its record must not say Evacuating for good), a restart not', async () => {
    const told: string[] = [];
    const restarted = await agentWithGate({ names: ['nova/web-1'] }, async () => void told.push('restart'));
    await restarted.atStop();
    expect(told).toEqual([]);

    const keeper = await agentWithGate({ names: ['nova/web-1'] }, async () => void told.push('for good'));
    await disableAgent();
    await keeper.atStop();
    expect(told).toEqual(['for good']);
  });

  it('what is on the host unknown (Nova does not answer): the gate stays', async () => {
    const keeper = await agentWithGate({ names: [], unknown: 'nova: 503' });
    await disableAgent();

    await keeper.atStop();

    expect(await gateObjects()).toHaveLength(2);
  });

  it('a restart (the DaemonSet still places an agent there): the gate stays for the successor', async () => {
    const keeper = await agentWithGate({ names: [] });

    await keeper.atStop();

    expect(await gateObjects()).toHaveLength(2);
  });

  it('the DaemonSet no longer selects the node (its nodeSelector changed): the gate goes', async () => {
    const keeper = await agentWithGate({ names: [] });
    await fx.k.request({
      method: 'PATCH',
      path: `${DS}/drainer`,
      contentType: MERGE,
      body: { spec: { template: { spec: { nodeSelector: { 'node-role.kubernetes.io/compute': '' } } } } },
    });

    await keeper.atStop();

    expect(await gateObjects()).toEqual([]);
  });
});
