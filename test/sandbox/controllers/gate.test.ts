// The drain gate in the sandbox as in a cluster: the simulated kubelet runs the gate pod on a
// cordoned, tainted node (Running and Ready), the disruption controller counts it healthy, so its
// PDB allows no disruption and an eviction is answered 429; a gate pod that is not Running yet is
// evicted without a PDB check (201), as a real API server does, which is why the gate must run.
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
      const p = s.kube.store.get('pods', 'drainer', 'drainer-gate-node-1');
      return statusOf(p).phase === 'Running' && p;
    });
    expect(statusOf(pod).conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]),
    );
    const pdb = await waitFor(() => {
      const p = s.kube.store.get('poddisruptionbudgets.policy', 'drainer', 'drainer-gate-node-1');
      return statusOf(p).currentHealthy === 1 && p;
    });
    expect(statusOf(pdb)).toMatchObject({ disruptionsAllowed: 0, desiredHealthy: 1, expectedPods: 1 });

    const { code, body } = await evict(s, 'drainer', 'drainer-gate-node-1');
    expect(code).toBe(429);
    expect(JSON.stringify(body)).toContain("would violate the pod's disruption budget");
  });

  it('a gate pod that is not Running is evicted without a PDB check (201)', async () => {
    sb = await sandbox({}, ['disruption']); // no kubelet: the pod stays Pending
    await arm(sb, 'node-2');
    expect(statusOf(sb.kube.store.get('pods', 'drainer', 'drainer-gate-node-2')).phase).toBe('Pending');
    const { code } = await evict(sb, 'drainer', 'drainer-gate-node-2');
    expect(code).toBe(201);
  });
});
