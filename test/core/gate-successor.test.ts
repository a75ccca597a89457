// Story: the operator re-creates drainer's DaemonSet while the gate holds (`kubectl delete ds
// --cascade=orphan`, then `kubectl apply -k`, as changing an immutable field takes). The agent keeps
// running (the new DaemonSet adopts its pod), the garbage collector takes the old owner off the
// gate's PDB, and nothing else touches the gate afterwards. The agent's own gate (DrainGate, the
// kube port and the keeper's watch, over the sandbox's API server) must give the PDB to the new
// DaemonSet by itself, so that a later uninstall still takes the gate along.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { gateKeeper } from '../../src/core/gate/keeper.ts';
import { kubeGateApi } from '../../src/core/gate/kube-port.ts';
import { gateName } from '../../src/kube/gate.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { silentLog, until } from '../kube/helpers.ts';
import { agentDaemonSet } from '../kube/agent-daemonset.ts';
import { startFixture, type KubeFixture } from '../kube/sandbox.ts';

const NS = 'drainer';
const DS = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
const PDB = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${gateName('n1')}`;
const POD = `/api/v1/namespaces/${NS}/pods/${gateName('n1')}`;
describe('the agent DaemonSet re-created with --cascade=orphan while the gate holds', () => {
  let fx: KubeFixture;
  const stop = new AbortController();
  const get = (path: string) => fx.k.request<KubeObject>({ path });
  const owners = async () => ((await get(PDB)).metadata.ownerReferences ?? []).map((r) => r.uid);

  beforeEach(async () => {
    fx = await startFixture();
    await fx.k.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
  });
  afterEach(async () => {
    stop.abort();
    await fx.close();
  });

  /** What the disruption controller and the kubelet would show: the PDB observed, the pod Running and Ready. */
  const started = async () => {
    const pdb = await get(PDB);
    const status = { observedGeneration: pdb.metadata.generation ?? 1, disruptionsAllowed: 0 };
    await fx.k.request({ method: 'PUT', path: `${PDB}/status`, body: { ...pdb, status } });
    const pod = await get(POD);
    const running = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    await fx.k.request({ method: 'PUT', path: `${POD}/status`, body: { ...pod, status: running } });
  };

  it('the agent gives the gate PDB to the new DaemonSet by itself, and the gate holds throughout', async () => {
    const first = await fx.k.request<KubeObject>({ method: 'POST', path: DS, body: agentDaemonSet() });
    const log = silentLog();
    const api = kubeGateApi({ k: fx.k, namespace: NS, daemonSet: 'drainer', image: 'pause', log });
    const gate = new DrainGate({
      api,
      log,
      podOf: (n) => ({ namespace: NS, name: gateName(n) }),
      retry: { initialMs: 20, maxMs: 200 },
    });
    const keeper = gateKeeper({
      k: fx.k,
      namespace: NS,
      nodeName: 'n1',
      gate,
      uninstalled: () => api.uninstalled?.() ?? Promise.resolve(false),
      log,
    });
    const watching = keeper.watch(stop.signal);
    await gate.set('n1', true);
    await started();
    await until(() => gate.held('n1'), 'the gate held');
    expect(await owners()).toEqual([first.metadata.uid]);
    const pod = await get(POD);

    // kubectl delete ds drainer --cascade=orphan: the garbage collector takes the owner off the PDB
    await fx.k.request({ method: 'DELETE', path: `${DS}/drainer`, body: { propagationPolicy: 'Orphan' } });
    await until(async () => (await owners()).length === 0, 'the PDB orphaned');
    const again = await fx.k.request<KubeObject>({ method: 'POST', path: DS, body: agentDaemonSet() });

    await until(
      async () => (await owners()).includes(again.metadata.uid ?? ''),
      'the PDB owned by the new DaemonSet',
      5_000,
    );
    expect(await owners()).toEqual([again.metadata.uid]);
    // the same gate pod guards the node: nothing was released or made again
    expect((await get(POD)).metadata.uid).toBe(pod.metadata.uid);
    expect(gate.held('n1')).toBe(true);
    expect(await api.uninstalled?.()).toBe(false);
    gate.stop();
    stop.abort();
    await watching;
  });
});
