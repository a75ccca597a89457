// Story (issue 48 item 9): mid-evacuation, the agent's pod is force-deleted (`kubectl delete pod
// --force --grace-period=0`) and its process killed with it: it never gives its node Lease back.
// The DaemonSet's next pod (another name, another uid) asks the API server about the holder's
// pod, finds it gone, and takes the Lease at once: the evacuation resumes well before the Lease's
// 300 s, and a `kubectl drain` held by the gate returns only after the last server left.
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeLease } from '../../src/kube/lease.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { hasKubectl } from '../daemonset/kubectl.ts';
import { daemonFiles, spawnDaemon } from './daemon-run.ts';
import { heldDrain, migrationsStarted } from './held-drain.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

const PODS = '/api/v1/namespaces/drainer/pods';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-node-node-a';

const run = hasKubectl || process.env.CI ? describe : describe.skip;

run('an agent pod force-deleted mid-evacuation (real daemon processes, real kubectl)', () => {
  let stack: Stack | undefined;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children) c.kill('SIGKILL');
    await stack?.close();
  });

  it('its successor takes the node Lease at once and resumes; the held drain returns after the last server left', async () => {
    const s = await startStack({ scenario: smallWorld({ servers: 12, migrationSeconds: 12 }) });
    stack = s;
    // the agent Lease as deployed: 300 s, five minutes a successor would have waited
    const fleet = { ...s.config.fleet, agentLeaseDuration: 300 };
    const { kubeconfig, configPath } = daemonFiles(s, 'node-a', { fleet });
    /** The DaemonSet's pod as the API server has it, and its agent process (the downward API's names). */
    const agentPod = async (name: string) => {
      const pod = await s.k.request<KubeObject>({
        method: 'POST',
        path: PODS,
        body: {
          metadata: { name, labels: { 'app.kubernetes.io/name': 'drainer' } },
          spec: { containers: [{ name: 'agent', image: 'drainer' }] },
        },
      });
      const child = spawnDaemon(configPath, {
        NODE_NAME: 'node-a',
        POD_NAME: name,
        POD_UID: pod.metadata.uid ?? '',
      });
      children.push(child);
      return { child, instance: `${name}/${pod.metadata.uid ?? ''}` };
    };
    const holder = async () =>
      (await s.k.request<KubeLease>({ path: LEASE }).catch(() => undefined))?.spec?.holderIdentity;
    const os = s.sandbox.openstack.state;

    const first = await agentPod('drainer-aaaaa');
    await until('the first agent holds node-a', async () => (await holder()) === first.instance, 30_000);
    const drain = heldDrain(os, kubeconfig);
    await migrationsStarted(os, 2);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    await s.k.request({
      method: 'DELETE',
      path: `${PODS}/drainer-aaaaa`,
      query: { gracePeriodSeconds: '0' },
    });
    expect(os.serversOnHost('node-a').length).toBeGreaterThan(0);

    const gone = Date.now();
    const second = await agentPod('drainer-bbbbb');
    await until('the successor holds node-a', async () => (await holder()) === second.instance, 30_000);
    const tookOverMs = Date.now() - gone;

    const drained = await drain.done;
    expect(tookOverMs).toBeLessThan(30_000);
    expect(drained.code, drained.stderr).toBe(0);
    expect(os.serversOnHost('node-a')).toEqual([]);
    expect(drain.returned()).toBeGreaterThanOrEqual(drain.lastLeft());
    for (const v of os.servers()) expect(os.migrateCalls(v.id), v.name).toBe(1);
  }, 240_000);
});
