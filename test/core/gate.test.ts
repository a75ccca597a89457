// The drain gate's objects against the sandbox's API server (kube-port.ts), and the DrainGate: the
// newest wish wins however the calls interleave, and what it reports is what the API server shows.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DrainGate } from '../../src/core/gate/gate.ts';
import type { GateApi, GateObjects } from '../../src/core/gate/api.ts';
import { isOpen } from '../../src/core/gate/observe.ts';
import { GATE_FINALIZER, gateName, gatePdbSpec, gatePodName } from '../../src/kube/gate.ts';
import { kubeGateApi } from '../../src/core/gate/kube-port.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { agentDaemonSet } from '../kube/agent-daemonset.ts';
import { startFixture, type KubeFixture } from '../kube/sandbox.ts';

const log = createLogger({ level: 'silent' });
const NS = 'drainer';
const POD = `/api/v1/namespaces/${NS}/pods/${gateName('n1')}`;
const PDB = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${gateName('n1')}`;

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
      body: agentDaemonSet(),
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
        name: gateName('n1'),
        uid: pdb.metadata.uid,
        controller: true,
      },
    ]);
    expect(pod.spec).toMatchObject({ nodeName: 'n1' });
    expect(pod.metadata.finalizers).toEqual([GATE_FINALIZER]);
    const tolerations = (pod.spec as { tolerations: { key?: string }[] }).tolerations;
    // Karpenter skips (never evicts, never waits for) a pod that tolerates karpenter.sh/disrupted
    expect(tolerations.every((t) => t.key)).toBe(true);
    expect(tolerations.map((t) => t.key)).not.toContain('karpenter.sh/disrupted');
    expect(tolerations.map((t) => t.key)).toEqual(
      expect.arrayContaining([
        'node.kubernetes.io/unschedulable',
        'drainer.dev/evacuating',
        'kubevirt.io/drain',
      ]),
    );
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

  it('a PDB deleted and made again takes over the pod that still guards the node (its finalizer stays)', async () => {
    await api().hold('n1');
    const oldPod = (await get(POD)).metadata.uid;
    await fx.k.request({ method: 'DELETE', path: PDB });
    await api().hold('n1');
    const pdb = await get(PDB);
    const pod = await get(POD);
    expect(pod.metadata.uid).toBe(oldPod);
    expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(pdb.metadata.uid);
    expect(pod.metadata.finalizers).toEqual([GATE_FINALIZER]);
  });

  it('an altered PDB gets its budget back', async () => {
    await api().hold('n1');
    const pdb = await get(PDB);
    await fx.k.request({
      method: 'PUT',
      path: PDB,
      body: { ...pdb, spec: { maxUnavailable: 1, selector: (pdb.spec as { selector: unknown }).selector } },
    });
    await api().hold('n1');
    expect((await get(PDB)).spec).toEqual({
      minAvailable: 1,
      selector: (pdb.spec as { selector: unknown }).selector,
    });
  });

  it('a deleted gate pod stays (its finalizer) while a spare takes over; release lets both go', async () => {
    const gate = api();
    await gate.hold('n1');
    await fx.k.request({ method: 'DELETE', path: POD });
    const going = await get(POD);
    expect(going.metadata.deletionTimestamp).toBeDefined();
    // hold leaves it (drains wait for it to be gone) and makes the spare the PDB guards
    await gate.hold('n1');
    expect((await get(POD)).metadata.uid).toBe(going.metadata.uid);
    const spare = await get(`${POD}-b`);
    expect(spare.metadata.finalizers).toEqual([GATE_FINALIZER]);
    expect((await gate.look('n1')).pod?.metadata.name).toBe(gatePodName('n1', 1));
    expect(await gate.release('n1')).toBe(true);
    await expect(get(POD)).rejects.toMatchObject({ status: 404 });
    await expect(get(`${POD}-b`)).rejects.toMatchObject({ status: 404 });
  });

  it('however often its pods are deleted while it holds, a new one guards: none is let go until release', async () => {
    // an eviction admitted while the PDB was being made again, one of a pod not yet Running, a
    // `kubectl drain --disable-eviction`: each leaves its pod terminating (its drain waits on it)
    const gate = api();
    await gate.hold('n1');
    const gone: string[] = [];
    for (let i = 0; i < 3; i++) {
      const pod = (await gate.look('n1')).pod!;
      await fx.k.request({ method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}` });
      gone.push(pod.metadata.name ?? '');
      await gate.hold('n1');
    }
    const guard = (await gate.look('n1')).pod!;

    expect(guard.metadata.deletionTimestamp).toBeUndefined();
    expect(guard.metadata.finalizers).toEqual([GATE_FINALIZER]);
    expect(gone).not.toContain(guard.metadata.name);
    for (const name of gone) {
      const held = await get(`/api/v1/namespaces/${NS}/pods/${name}`);
      expect([held.metadata.deletionTimestamp !== undefined, held.metadata.finalizers]).toEqual([
        true,
        [GATE_FINALIZER],
      ]);
    }
    expect(await gate.release('n1')).toBe(true);
    for (const name of [...gone, guard.metadata.name])
      await expect(get(`/api/v1/namespaces/${NS}/pods/${name}`)).rejects.toMatchObject({ status: 404 });
  });

  it('uninstalled: the DaemonSet that owned the PDB at start is gone', async () => {
    await fx.k.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${NS}/daemonsets`,
      body: agentDaemonSet(),
    });
    const gate = api();
    await gate.hold('n1');
    expect(await gate.uninstalled?.()).toBe(false);
    await fx.k.request({ method: 'DELETE', path: `/apis/apps/v1/namespaces/${NS}/daemonsets/drainer` });
    expect(await gate.uninstalled?.()).toBe(true);
    // run-once and the sandbox have no DaemonSet: never an uninstall
    expect(await api('missing').uninstalled?.()).toBe(false);
  });

  it('a DaemonSet re-created (--cascade=orphan then apply, replace --force) is no uninstall; the PDB follows its new owner', async () => {
    const ds = agentDaemonSet();
    const DS = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
    await fx.k.request({ method: 'POST', path: DS, body: ds });
    const gate = api();
    await gate.hold('n1');
    await fx.k.request({ method: 'DELETE', path: `${DS}/drainer` });
    const again = await fx.k.request<KubeObject>({ method: 'POST', path: DS, body: ds });
    expect(await gate.uninstalled?.()).toBe(false);
    // the PDB is owned by the DaemonSet that is there: uninstalling that one takes the gate too
    await gate.hold('n1');
    expect((await get(PDB)).metadata.ownerReferences?.map((r) => r.uid)).toEqual([again.metadata.uid]);
    await fx.k.request({ method: 'DELETE', path: `${DS}/drainer` });
    expect(await gate.uninstalled?.()).toBe(true);
  });

  describe('an upgrade from gates named without a hash (drainer-gate-<node>)', () => {
    const LEGACY = 'drainer-gate-n1';
    const legacyLabels = {
      'app.kubernetes.io/name': 'drainer',
      'app.kubernetes.io/component': 'drain-gate',
      'drainer.dev/gate-node': 'n1',
    };
    /** What an older drainer left: its PDB and its pod, guarded by the finalizer. */
    const olderGate = async () => {
      const pdb = await fx.k.request<KubeObject>({
        method: 'POST',
        path: `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`,
        body: {
          metadata: { name: LEGACY, labels: legacyLabels },
          spec: { minAvailable: 1, selector: { matchLabels: legacyLabels } },
        },
      });
      await fx.k.request({
        method: 'POST',
        path: `/api/v1/namespaces/${NS}/pods`,
        body: {
          metadata: {
            name: LEGACY,
            labels: legacyLabels,
            finalizers: [GATE_FINALIZER],
            ownerReferences: [
              {
                apiVersion: 'policy/v1',
                kind: 'PodDisruptionBudget',
                name: LEGACY,
                uid: pdb.metadata.uid,
                controller: true,
              },
            ],
          },
          spec: { nodeName: 'n1', containers: [{ name: 'gate', image: 'pause' }] },
        },
      });
    };
    const LEGACY_POD = `/api/v1/namespaces/${NS}/pods/${LEGACY}`;
    const LEGACY_PDB = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${LEGACY}`;

    it('the older gate stays until the new one holds, then goes (its finalizer dropped)', async () => {
      await olderGate();
      const gate = api();
      await gate.hold('n1');
      expect((await gate.look('n1')).legacy?.map((o) => o.metadata.name)).toEqual([LEGACY, LEGACY]);
      // the new pod has not started: the older gate still guards the node
      await gate.hold('n1');
      expect((await get(LEGACY_POD)).metadata.finalizers).toEqual([GATE_FINALIZER]);
      const pdb = await get(PDB);
      await fx.k.request({
        method: 'PUT',
        path: `${PDB}/status`,
        body: { ...pdb, status: { observedGeneration: pdb.metadata.generation ?? 1, disruptionsAllowed: 0 } },
      });
      const pod = await get(POD);
      await fx.k.request({
        method: 'PUT',
        path: `${POD}/status`,
        body: { ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      });
      await gate.hold('n1');
      await expect(get(LEGACY_POD)).rejects.toMatchObject({ status: 404 });
      await expect(get(LEGACY_PDB)).rejects.toMatchObject({ status: 404 });
      expect((await gate.look('n1')).legacy).toBeUndefined();
    });

    it('a release lets the older gate go too', async () => {
      await olderGate();
      const gate = api();
      expect(isOpen(await gate.look('n1'))).toBe(false);
      expect(await gate.release('n1')).toBe(true);
      await expect(get(LEGACY_POD)).rejects.toMatchObject({ status: 404 });
      expect(isOpen(await gate.look('n1'))).toBe(true);
    });
  });

  it('release drops the finalizer and deletes the gate pod (the PDB stays); a second release finds none', async () => {
    const gate = api();
    await gate.hold('n1');
    expect(await gate.release('n1')).toBe(true);
    await expect(get(POD)).rejects.toMatchObject({ status: 404 });
    expect((await get(PDB)).metadata.name).toBe(gateName('n1'));
    expect(await gate.release('n1')).toBe(false);
  });
});

/** An in-memory API server for the DrainGate: the objects a test sets, and the calls made. */
function memoryApi(initial: GateObjects = {}) {
  const state = { objs: { ...initial }, calls: [] as string[] };
  const api: GateApi = {
    look: () => Promise.resolve(state.objs),
    hold: () => {
      state.calls.push('hold');
      state.objs = { pdb: state.objs.pdb ?? pdb(), pod: state.objs.pod ?? pod('Pending') };
      return Promise.resolve();
    },
    release: () => {
      state.calls.push('release');
      const had = state.objs.pod !== undefined;
      state.objs = { pdb: state.objs.pdb };
      return Promise.resolve(had);
    },
  };
  return { api, state };
}

const pdb = (allowed = 0): KubeObject => ({
  metadata: { name: gateName('n1'), uid: 'pdb-1', generation: 1 },
  spec: gatePdbSpec('n1'),
  status: { observedGeneration: 1, disruptionsAllowed: allowed },
});

const pod = (phase: string, waiting?: string): KubeObject => ({
  metadata: {
    name: gateName('n1'),
    finalizers: [GATE_FINALIZER],
    ownerReferences: [
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        name: gateName('n1'),
        uid: 'pdb-1',
        controller: true,
      },
    ],
  },
  spec: { nodeName: 'n1' },
  status: {
    phase,
    conditions: [{ type: 'Ready', status: phase === 'Running' ? 'True' : 'False' }],
    ...(waiting
      ? {
          containerStatuses: [
            { state: { waiting: { reason: waiting, message: 'Back-off pulling image "x"' } } },
          ],
        }
      : {}),
  },
});

const gateWith = (api: GateApi, extra: Partial<ConstructorParameters<typeof DrainGate>[0]> = {}) =>
  new DrainGate({
    api,
    log,
    podOf: (n) => ({ namespace: NS, name: gateName(n) }),
    retry: { initialMs: 5, maxMs: 20 },
    ...extra,
  });

describe('DrainGate: the newest wish wins', () => {
  it('a slow hold (agent start) followed by a release (Evacuated) ends released', async () => {
    const calls: string[] = [];
    let finishHold: () => void = () => {};
    let objs: GateObjects = {};
    const api: GateApi = {
      look: () => Promise.resolve(objs),
      hold: () => {
        calls.push('hold');
        return new Promise<void>(
          (r) =>
            (finishHold = () => {
              objs = { pdb: pdb(), pod: pod('Running') };
              r();
            }),
        );
      },
      release: () => {
        calls.push('release');
        objs = { pdb: objs.pdb };
        return Promise.resolve(true);
      },
    };
    const gate = gateWith(api);
    const tick = () => new Promise((r) => setTimeout(r, 5));
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
    expect(gate.seen('n1')?.text).toBe('released');
    gate.stop();
  });

  it('a failed look leaves the state unknown; the next one applies the wish', async () => {
    let fail = true;
    const { api: inner } = memoryApi({ pdb: pdb(), pod: pod('Running') });
    const gate = gateWith({
      ...inner,
      look: () => (fail ? Promise.reject(new Error('503')) : inner.look('n1')),
    });
    await expect(gate.set('n1', false)).rejects.toThrow('503');
    expect(gate.held('n1')).toBeUndefined();
    fail = false;
    await gate.set('n1', false);
    expect(gate.seen('n1')?.text).toBe('released');
    gate.stop();
  });

  it("knows its node's gate pod (drainer's own drain leaves it alone)", () => {
    const gate = gateWith(memoryApi().api);
    expect(gate.isGatePod('n1', { namespace: NS, name: gateName('n1') })).toBe(true);
    expect(gate.isGatePod('n1', { namespace: 'shop', name: gateName('n1') })).toBe(false);
    expect(gate.isGatePod('n1', { namespace: NS, name: gateName('n2') })).toBe(false);
  });
});

describe('DrainGate: held is what the API server shows', () => {
  it('a gate pod that is Pending is not held yet; once Running and Ready it is, and whenHeld resolves', async () => {
    const { api, state } = memoryApi();
    const seen: [boolean, boolean][] = [];
    const gate = gateWith(api, { onSeen: (_n, s, want) => seen.push([s.held, want]) });
    await gate.set('n1', true);
    expect(gate.seen('n1')?.text).toBe('not held: its pod is Pending');
    const held = gate.whenHeld('n1', 5_000);
    state.objs = { pdb: pdb(), pod: pod('Running') };
    expect(await held).toBe(true);
    expect(seen[0]).toEqual([false, true]);
    expect(seen.at(-1)).toEqual([true, true]);
    gate.stop();
  });

  it('a deleted gate pod or PDB is made again at the next look (a watch event)', async () => {
    const { api, state } = memoryApi({ pdb: pdb(), pod: pod('Running') });
    const gate = gateWith(api);
    await gate.set('n1', true);
    expect(state.calls).toEqual([]);
    state.objs = { pod: state.objs.pod };
    gate.heal('n1');
    await new Promise((r) => setTimeout(r, 20));
    expect(state.calls).toEqual(['hold']);
    expect(state.objs.pdb).toBeDefined();
    gate.stop();
  });

  it('an image that cannot be pulled: not held, one DrainGateNotHeld Event naming why; held again is said too', async () => {
    const { api, state } = memoryApi({ pdb: pdb(), pod: pod('Pending', 'ImagePullBackOff') });
    const events: string[] = [];
    const gate = gateWith(api, {
      event: (_n, type, reason, message) => events.push(`${type} ${reason} ${message}`),
    });
    await gate.set('n1', true);
    await gate.set('n1', true);
    expect(gate.seen('n1')).toMatchObject({ held: false, lasting: true });
    expect(events).toEqual([
      'Warning DrainGateNotHeld drain gate of n1 not held: its pod is Pending (ImagePullBackOff: Back-off pulling image "x")',
    ]);
    state.objs = { pdb: pdb(), pod: pod('Running') };
    await gate.set('n1', true);
    expect(events.at(-1)).toMatch(/^Normal DrainGateHeld drain gate of n1 holds again/);
    gate.stop();
  });

  it('a pass that wants what is already so costs no request (the watch says when it changes)', async () => {
    const { api } = memoryApi({ pdb: pdb(), pod: pod('Running') });
    let looks = 0;
    const gate = gateWith({ ...api, look: (n) => (looks++, api.look(n)) });
    await gate.set('n1', true);
    expect(looks).toBe(1);
    gate.want('n1', true);
    await new Promise((r) => setTimeout(r, 10));
    expect(looks).toBe(1);
    gate.stop();
  });

  it('a PDB that allows a disruption is not held', async () => {
    const gate = gateWith(memoryApi({ pdb: pdb(1), pod: pod('Running') }).api);
    await gate.set('n1', true);
    expect(gate.seen('n1')?.text).toBe('not held: its PodDisruptionBudget allows 1 disruption');
    expect(await gate.whenHeld('n1', 20)).toBe(false);
    gate.stop();
  });
});

describe('DrainGate: a "held" counts only when seen after the wish it answers', () => {
  it('a release still in flight when the restore asks for the gate: whenHeld waits for the hold that follows it', async () => {
    const order: string[] = [];
    let finishRelease: () => void = () => {};
    const { api: inner, state } = memoryApi({ pdb: pdb(), pod: pod('Running') });
    const gate = gateWith({
      ...inner,
      release: () =>
        new Promise<boolean>((resolve) => {
          order.push('release begins');
          finishRelease = () => {
            order.push('release ends');
            state.objs = { pdb: state.objs.pdb };
            resolve(true);
          };
        }),
      hold: (n) => {
        order.push('hold');
        return inner.hold(n).then(() => {
          state.objs = { pdb: pdb(), pod: pod('Running') };
        });
      },
    });
    await gate.set('n1', true);
    expect(gate.held('n1')).toBe(true);
    gate.want('n1', false);
    await new Promise((r) => setTimeout(r, 5));
    // an uncordon: the restore wants the gate held, and waits for it
    gate.want('n1', true);
    const held = gate.whenHeld('n1', 2_000).then((h) => order.push(`whenHeld ${h}`));
    await new Promise((r) => setTimeout(r, 20));
    finishRelease();
    await held;
    expect(order).toEqual(['release begins', 'release ends', 'hold', 'whenHeld true']);
    gate.stop();
  });
});
