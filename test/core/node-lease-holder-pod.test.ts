// Story: an agent pod is force-deleted (or killed with no container restart) in the middle of an
// evacuation, and never gives its node Lease back. Its successor asks the API server about the
// holder's pod: gone, or a pod of that name with another uid, is a holder that will never renew,
// and the successor takes the Lease at once instead of waiting out its 300 s. A live pod, or a
// holder that is no pod (a run-once on a laptop), is waited for as before.
import { describe, expect, it } from 'vitest';
import { kubeHolderPod, NodeLease, type LeaseTake } from '../../src/core/agent/node-lease.ts';
import { quietLogger } from './fakes.ts';
import { fleetWorld } from './fleet-world.ts';

const PODS = '/api/v1/namespaces/drainer/pods';

const world = fleetWorld(['n1']);
const { held } = world;

/** An agent pod of the DaemonSet on n1; answers its "<name>/<uid>" instance. */
async function agentPod(name: string): Promise<string> {
  const pod = await world.fx.k.request<{ metadata: { uid: string } }>({
    method: 'POST',
    path: PODS,
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { 'app.kubernetes.io/name': 'drainer' } },
      spec: { nodeName: 'n1', containers: [{ name: 'agent', image: 'drainer:1' }] },
    },
  });
  return `${name}/${pod.metadata.uid}`;
}

const forceDelete = (name: string) =>
  world.fx.k.request({ method: 'DELETE', path: `${PODS}/${name}`, query: { gracePeriodSeconds: '0' } });

/** The agent of `instance`, whose own clock never moves: only the API server can tell it the holder is gone. */
const lease = (instance: string) =>
  new NodeLease({
    api: world.api(),
    node: 'n1',
    instance,
    durationSeconds: 300,
    log: quietLogger(),
    holderPod: kubeHolderPod(world.fx.k, 'drainer'),
    monotonic: () => 0,
  });

const keep = (t: LeaseTake): LeaseTake => {
  if ('held' in t) held.push(t.held);
  return t;
};

describe("a successor agent and the holder's pod", () => {
  it('takes the Lease at once when the holder pod was force-deleted without giving it back', async () => {
    const old = keep(await lease(await agentPod('drainer-old')).tryTake());
    expect('held' in old).toBe(true);
    if ('held' in old) old.held.abandon(); // killed: it renews no more and never releases
    await forceDelete('drainer-old');

    const successor = keep(await lease(await agentPod('drainer-new')).tryTake());

    expect('held' in successor).toBe(true);
  });

  it('takes it when a pod of the holder name is there with another uid (made again)', async () => {
    const old = keep(await lease(await agentPod('drainer-x')).tryTake());
    if ('held' in old) old.held.abandon();
    await forceDelete('drainer-x');
    await agentPod('drainer-x');

    expect('held' in keep(await lease(await agentPod('drainer-new')).tryTake())).toBe(true);
  });

  it('takes it when the holder pod has finished (no container restart will renew it)', async () => {
    const old = keep(await lease(await agentPod('drainer-old')).tryTake());
    if ('held' in old) old.held.abandon();
    await world.fx.k.request({
      method: 'PATCH',
      path: `${PODS}/drainer-old/status`,
      contentType: 'application/merge-patch+json',
      body: { status: { phase: 'Failed' } },
    });

    expect('held' in keep(await lease(await agentPod('drainer-new')).tryTake())).toBe(true);
  });

  it('waits for a holder whose pod still runs', async () => {
    const oldInstance = await agentPod('drainer-old');
    keep(await lease(oldInstance).tryTake());

    const successor = await lease(await agentPod('drainer-new')).tryTake();

    expect(successor).toMatchObject({ holder: oldInstance });
  });

  it('waits for a holder that is no pod (a run-once elsewhere: <hostname>/<pid>)', async () => {
    keep(await lease('laptop/4242').tryTake());

    const successor = await lease(await agentPod('drainer-new')).tryTake();

    expect(successor).toMatchObject({ holder: 'laptop/4242' });
  });
});
