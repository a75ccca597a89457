// The drain gate's objects against the sandbox's API server (kube-port.ts), and the DrainGate's
// ordering: the newest wish wins however the calls interleave.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DrainGate } from '../../src/core/gate/gate.ts';
import type { GateApi } from '../../src/core/gate/api.ts';
import { kubeGateApi } from '../../src/core/gate/kube-port.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startFixture, type KubeFixture } from '../kube/sandbox.ts';

const log = createLogger({ level: 'silent' });
const NS = 'drainer';
const POD = `/api/v1/namespaces/${NS}/pods/drainer-gate-n1`;
const PDB = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/drainer-gate-n1`;

describe('drain gate objects (sandbox API server)', () => {
  let fx: KubeFixture;
  const get = (path: string) => fx.k.request<KubeObject>({ path });
  const api = (daemonSet = 'drainer') =>
    kubeGateApi({
      k: fx.k,
      namespace: NS,
      daemonSet,
      image: 'mirror.example/pause:3.10',
      log,
      pause: async () => {},
    });

  beforeEach(async () => {
    fx = await startFixture();
    await fx.k.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
  });
  afterEach(async () => fx.close());

  it('hold: the PDB owned by the agent DaemonSet, the pod bound to the node and controlled by its PDB', async () => {
    const ds = await fx.k.request<KubeObject>({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${NS}/daemonsets`,
      body: {
        metadata: { name: 'drainer' },
        spec: {
          selector: { matchLabels: { app: 'drainer' } },
          template: {
            metadata: { labels: { app: 'drainer' } },
            spec: { containers: [{ name: 'a', image: 'x' }] },
          },
        },
      },
    });
    await api().hold('n1');
    const pdb = await get(PDB);
    expect(pdb.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'drainer', uid: ds.metadata.uid },
    ]);
    expect(pdb.spec).toMatchObject({ minAvailable: 1 });
    const pod = await get(POD);
    expect(pod.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        name: 'drainer-gate-n1',
        uid: pdb.metadata.uid,
        controller: true,
      },
    ]);
    expect(pod.spec).toMatchObject({ nodeName: 'n1' });
    expect((pod.spec as { tolerations: object[] }).tolerations).toContainEqual({ operator: 'Exists' });
    expect((pod.spec as { containers: { image: string }[] }).containers[0]?.image).toBe(
      'mirror.example/pause:3.10',
    );
  });

  it('without a DaemonSet (run-once, sandbox) the PDB has no owner', async () => {
    await api('missing').hold('n1');
    expect((await get(PDB)).metadata.ownerReferences).toBeUndefined();
  });

  it('hold twice: the same pod (nothing made again)', async () => {
    await api().hold('n1');
    const first = (await get(POD)).metadata.uid;
    await api().hold('n1');
    expect((await get(POD)).metadata.uid).toBe(first);
  });

  it('a pod whose PDB was deleted and made again is replaced by one the new PDB controls', async () => {
    await api().hold('n1');
    const oldPod = (await get(POD)).metadata.uid;
    await fx.k.request({ method: 'DELETE', path: PDB });
    await api().hold('n1');
    const pdb = await get(PDB);
    const pod = await get(POD);
    expect(pod.metadata.uid).not.toBe(oldPod);
    expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(pdb.metadata.uid);
  });

  it('release deletes the gate pod (the PDB stays); a second release finds none', async () => {
    const gate = api();
    await gate.hold('n1');
    expect(await gate.release('n1')).toBe(true);
    await expect(get(POD)).rejects.toMatchObject({ status: 404 });
    expect((await get(PDB)).metadata.name).toBe('drainer-gate-n1');
    expect(await gate.release('n1')).toBe(false);
  });
});

describe('DrainGate: the newest wish wins', () => {
  it('a slow hold (agent start) followed by a release (Evacuated) ends released', async () => {
    const calls: string[] = [];
    let finishHold: () => void = () => {};
    const api: GateApi = {
      hold: () => {
        calls.push('hold');
        return new Promise<void>((r) => (finishHold = r));
      },
      release: () => {
        calls.push('release');
        return Promise.resolve(true);
      },
    };
    const held: boolean[] = [];
    const gate = new DrainGate({
      api,
      log,
      podOf: (n) => ({ namespace: NS, name: `drainer-gate-${n}` }),
      onHeld: (h) => held.push(h),
    });
    const tick = () => new Promise((r) => setImmediate(r));
    const arm = gate.set('n1', true);
    await tick();
    expect(calls).toEqual(['hold']);
    const release = gate.set('n1', false);
    await tick();
    // the release waits for the hold under way
    expect(calls).toEqual(['hold']);
    finishHold();
    await Promise.all([arm, release]);
    // the release is applied after the hold, never before it
    expect(calls).toEqual(['hold', 'release']);
    expect(held.at(-1)).toBe(false);
    expect(gate.held('n1')).toBe(false);
  });

  it('a failed release leaves the state unknown, so the next pass applies it again', async () => {
    let fail = true;
    const gate = new DrainGate({
      api: {
        hold: () => Promise.resolve(),
        release: () => (fail ? Promise.reject(new Error('503')) : Promise.resolve(true)),
      },
      log,
      podOf: (n) => ({ namespace: NS, name: n }),
    });
    await expect(gate.set('n1', false)).rejects.toThrow('503');
    expect(gate.held('n1')).toBeUndefined();
    fail = false;
    await gate.set('n1', false);
    expect(gate.held('n1')).toBe(false);
  });

  it("knows its node's gate pod (drainer's own drain leaves it alone)", () => {
    const gate = new DrainGate({
      api: { hold: () => Promise.resolve(), release: () => Promise.resolve(false) },
      log,
      podOf: (n) => ({ namespace: NS, name: `drainer-gate-${n}` }),
    });
    expect(gate.isGatePod('n1', { namespace: NS, name: 'drainer-gate-n1' })).toBe(true);
    expect(gate.isGatePod('n1', { namespace: 'shop', name: 'drainer-gate-n1' })).toBe(false);
    expect(gate.isGatePod('n1', { namespace: NS, name: 'drainer-gate-n2' })).toBe(false);
  });
});
