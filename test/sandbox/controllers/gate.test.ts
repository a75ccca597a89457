// The drain gate in the sandbox as in a cluster: the simulated kubelet runs the gate pod on a
// cordoned, tainted node (Running and Ready), the disruption controller counts it healthy, so its
// PDB allows no disruption and an eviction is answered 429; a gate pod that is not Running yet is
// evicted without a PDB check (201), as a real API server does, which is why the gate must run. The
// kubelet starts pods after a delay, as a real one does; a deleted pod stays while it has finalizers.
import { gateName } from '../../../src/kube/gate.ts';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { gatePdb, gatePod } from '../../../src/kube/gate.ts';
import { cordon, evict, sandbox, statusOf, taint, waitFor } from './helpers.ts';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** The PDB and the gate pod, created through the API server as the agent does (the pod starts Pending). */
async function arm(s: Sandbox, node: string): Promise<void> {
  const post = async (path: string, body: object) => {
    const res = await fetch(`${s.kube.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { metadata: { name: string; uid: string } };
  };
  const pdb = await post('/apis/policy/v1/namespaces/drainer/poddisruptionbudgets', gatePdb('drainer', node));
  await post(
    '/api/v1/namespaces/drainer/pods',
    gatePod('drainer', node, 'pause', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      name: pdb.metadata.name,
      uid: pdb.metadata.uid,
      controller: true,
    }),
  );
}

describe('drain gate in the sandbox', () => {
  it('runs Ready on a cordoned, tainted node; its PDB allows no disruption; eviction 429', async () => {
    sb = await sandbox({}, ['kubelet', 'disruption']);
    const s = sb;
    cordon(s, 'node-1');
    taint(s, 'node-1', 'karpenter.sh/disrupted');
    await arm(s, 'node-1');

    const pod = await waitFor(() => {
      const p = s.kube.store.get('pods', 'drainer', gateName('node-1'));
      return statusOf(p).phase === 'Running' && p;
    });
    expect(statusOf(pod).conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]),
    );
    const pdb = await waitFor(() => {
      const p = s.kube.store.get('poddisruptionbudgets.policy', 'drainer', gateName('node-1'));
      return statusOf(p).currentHealthy === 1 && p;
    });
    expect(statusOf(pdb)).toMatchObject({ disruptionsAllowed: 0, desiredHealthy: 1, expectedPods: 1 });

    const { code, body } = await evict(s, 'drainer', gateName('node-1'));
    expect(code).toBe(429);
    expect(JSON.stringify(body)).toContain("would violate the pod's disruption budget");
  });

  it('a gate pod that is not Running is evicted without a PDB check (201)', async () => {
    sb = await sandbox({}, ['disruption']); // no kubelet: the pod stays Pending
    await arm(sb, 'node-2');
    expect(statusOf(sb.kube.store.get('pods', 'drainer', gateName('node-2'))).phase).toBe('Pending');
    const { code } = await evict(sb, 'drainer', gateName('node-2'));
    expect(code).toBe(201);
  });

  it('the kubelet starts a pod only after podStartSeconds (2 s by default): it is Pending first', async () => {
    sb = await sandbox({}, ['kubelet', 'disruption']);
    const s = sb;
    expect(s.scenario.timings.podStartSeconds).toBe(2);
    await arm(s, 'node-1');
    expect(statusOf(s.kube.store.get('pods', 'drainer', gateName('node-1'))).phase ?? 'Pending').toBe(
      'Pending',
    );
    await waitFor(
      () => statusOf(s.kube.store.get('pods', 'drainer', gateName('node-1'))).phase === 'Running',
    );
  });

  it('a pod whose image cannot be pulled stays Pending in ImagePullBackOff, not Ready', async () => {
    sb = await sandbox({ unpullableImages: ['pause'] }, ['kubelet', 'disruption']);
    const s = sb;
    await arm(s, 'node-1');
    const pod = await waitFor(() => {
      const p = s.kube.store.get('pods', 'drainer', gateName('node-1'));
      return statusOf(p).containerStatuses && p;
    });
    expect(statusOf(pod).phase).toBe('Pending');
    expect(statusOf(pod).containerStatuses[0].state.waiting.reason).toBe('ImagePullBackOff');
    expect(statusOf(pod).conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'False' })]),
    );
  });

  it('a deleted gate pod stays Terminating while it has a finalizer; its eviction is 201 (no PDB check); it goes with the finalizer', async () => {
    sb = await sandbox({}, ['kubelet', 'disruption']);
    const s = sb;
    await arm(s, 'node-1');
    await waitFor(
      () => statusOf(s.kube.store.get('pods', 'drainer', gateName('node-1'))).phase === 'Running',
    );
    const url = `${s.kube.url}/api/v1/namespaces/drainer/pods/${gateName('node-1')}`;
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100)); // the kubelet has stopped it by now
    const going = s.kube.store.find('pods', 'drainer', gateName('node-1'));
    expect(going?.metadata.deletionTimestamp).toBeDefined();
    expect((await evict(s, 'drainer', gateName('node-1'))).code).toBe(201);
    const patched = await fetch(url, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { finalizers: null } }),
    });
    expect(patched.status).toBe(200);
    expect(s.kube.store.find('pods', 'drainer', gateName('node-1'))).toBeUndefined();
  });

  it('reads the protobuf DeleteOptions kubectl sends with a DELETE (a uid precondition that does not match: 409)', async () => {
    sb = await sandbox({}, ['disruption']);
    const s = sb;
    await arm(s, 'node-1');
    const url = `${s.kube.url}/api/v1/namespaces/drainer/pods/${gateName('node-1')}`;
    const del = (uid: string) =>
      fetch(url, {
        method: 'DELETE',
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
        body: deleteOptionsProto(uid),
      });
    expect((await del('not-its-uid')).status).toBe(409);
    const uid = s.kube.store.get('pods', 'drainer', gateName('node-1')).metadata.uid ?? '';
    expect((await del(uid)).status).toBe(200);
    expect(
      s.kube.store.find('pods', 'drainer', gateName('node-1'))?.metadata.deletionTimestamp,
    ).toBeDefined();
  });
});

/** Protobuf field `no` of wire type 2 (bytes) or 0 (varint). */
const bytesField = (no: number, b: Buffer) => Buffer.concat([Buffer.from([(no << 3) | 2, b.length]), b]);
const varintField = (no: number, v: number) => Buffer.from([no << 3, v]);

/** "k8s\0" + runtime.Unknown{typeMeta{v1, DeleteOptions}, raw: DeleteOptions{gracePeriodSeconds 0, preconditions{uid}}}. */
function deleteOptionsProto(uid: string): Buffer {
  const typeMeta = Buffer.concat([
    bytesField(1, Buffer.from('v1')),
    bytesField(2, Buffer.from('DeleteOptions')),
  ]);
  const raw = Buffer.concat([varintField(1, 0), bytesField(2, bytesField(1, Buffer.from(uid)))]);
  return Buffer.concat([
    Buffer.from('k8s\0'),
    bytesField(1, typeMeta),
    bytesField(2, raw),
    bytesField(4, Buffer.alloc(0)),
  ]);
}
