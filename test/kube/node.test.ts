import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/errors.ts';
import { guardedPatch } from '../../src/kube/guarded.ts';
import {
  addTaint,
  getNode,
  removeTaint,
  setAnnotation,
  setAnnotationWith,
  setUnschedulable,
} from '../../src/kube/node.ts';
import type { KubeNode, Taint } from '../../src/kube/types.ts';
import { node, startFixture, type KubeFixture } from './sandbox.ts';

let f: KubeFixture;
beforeEach(async () => {
  f = await startFixture();
  f.server.store.create('nodes', node('n1'));
});
afterEach(() => f.close());

const taintsOf = (n: KubeNode): string[] =>
  (n.spec?.taints ?? []).map((t: Taint) => `${t.key}=${t.value ?? ''}:${t.effect}`);
const stored = (): KubeNode => f.server.store.get('nodes', undefined, 'n1');

describe('node operations', () => {
  it('cordons and uncordons with a merge patch', async () => {
    expect((await setUnschedulable(f.k, 'n1', true)).spec?.unschedulable).toBe(true);
    expect((await getNode(f.k, 'n1')).spec?.unschedulable).toBe(true);
    await setUnschedulable(f.k, 'n1', false);
    expect(stored().spec?.unschedulable).toBeFalsy();
  });

  it('adds a taint once and keeps the taints of others', async () => {
    f.server.store.patch('nodes', undefined, 'n1', 'application/merge-patch+json', {
      spec: { taints: [{ key: 'other', effect: 'NoExecute' }] },
    });
    expect(await addTaint(f.k, 'n1', { key: 'drainer.dev/evacuating', effect: 'NoSchedule' })).toBe(true);
    expect(await addTaint(f.k, 'n1', { key: 'drainer.dev/evacuating', effect: 'NoSchedule' })).toBe(false);
    expect(taintsOf(stored())).toEqual(['other=:NoExecute', 'drainer.dev/evacuating=:NoSchedule']);
  });

  it('removes only the taint with that key and effect', async () => {
    await addTaint(f.k, 'n1', { key: 'k', effect: 'NoSchedule' });
    await addTaint(f.k, 'n1', { key: 'k', effect: 'NoExecute' });
    expect(await removeTaint(f.k, 'n1', 'k', 'NoSchedule')).toBe(true);
    expect(await removeTaint(f.k, 'n1', 'k', 'NoSchedule')).toBe(false);
    expect(taintsOf(stored())).toEqual(['k=:NoExecute']);
    await removeTaint(f.k, 'n1', 'k', 'NoExecute');
    expect(taintsOf(stored())).toEqual([]);
  });

  it('loses no taint when several writers add theirs at the same time', async () => {
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    await Promise.all(keys.map((key) => addTaint(f.k, 'n1', { key, effect: 'NoSchedule' })));
    expect(taintsOf(stored()).sort()).toEqual(keys.map((key) => `${key}=:NoSchedule`));
  });

  it("re-reads and keeps another writer's taint that landed between our read and our write", async () => {
    await addTaint(f.k, 'n1', { key: 'first', effect: 'NoSchedule' });
    let interfered = false;
    await guardedPatch<KubeNode>(f.k, '/api/v1/nodes/n1', (n) => {
      if (!interfered) {
        interfered = true; // someone else writes right after our read
        f.server.store.patch('nodes', undefined, 'n1', 'application/json-patch+json', [
          { op: 'add', path: '/spec/taints/-', value: { key: 'theirs', effect: 'NoSchedule' } },
        ]);
      }
      const current = n.spec?.taints ?? [];
      return [
        { op: 'test', path: '/spec/taints', value: current },
        { op: 'replace', path: '/spec/taints', value: [...current, { key: 'ours', effect: 'NoSchedule' }] },
      ];
    });
    expect(taintsOf(stored())).toEqual(['first=:NoSchedule', 'theirs=:NoSchedule', 'ours=:NoSchedule']);
  });

  it('removes our taint from a Node registered again between its read and its write: the 422 is the guard, nothing is left to remove', async () => {
    // chaos seed 3 round 14: `drainer restore --force` while Karpenter's new instance registered hv-2
    await addTaint(f.k, 'n1', { key: 'drainer.dev/evacuating', effect: 'NoSchedule' });
    let registered = false;
    const k = {
      ...f.k,
      request: async <T>(req: Parameters<typeof f.k.request>[0]): Promise<T> => {
        if (req.method === 'PATCH' && !registered) {
          registered = true; // the old Node goes, a new one with no taints comes under its name
          f.server.store.delete('nodes', undefined, 'n1');
          f.server.store.create('nodes', node('n1'));
        }
        return f.k.request<T>(req);
      },
    };

    expect(await removeTaint(k, 'n1', 'drainer.dev/evacuating', 'NoSchedule')).toBe(false);
    expect(taintsOf(stored())).toEqual([]);
    const refused = f.server.requestLog.filter((r) => r.status >= 400);
    expect(refused).toEqual([expect.objectContaining({ method: 'PATCH', status: 422, guardFailed: true })]);
  });

  it('sets and removes annotations, refusing a stale resourceVersion', async () => {
    const n = await setAnnotation(f.k, 'n1', 'drainer.dev/state', '{"phase":"Evacuating"}');
    expect(stored().metadata.annotations?.['drainer.dev/state']).toBe('{"phase":"Evacuating"}');
    await setAnnotation(f.k, 'n1', 'other', 'x');
    await expect(
      setAnnotation(f.k, 'n1', 'drainer.dev/state', 'late', {
        resourceVersion: n.metadata.resourceVersion ?? '',
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    await setAnnotation(f.k, 'n1', 'drainer.dev/state', null);
    expect(stored().metadata.annotations).toEqual({ other: 'x' });
  });
});

describe('a record write that carries the cordon and the taint', () => {
  const key = 'drainer.dev/state';
  const ours = { key: 'drainer.dev/evacuating', effect: 'NoSchedule' } as const;
  const writes = () => f.server.requestLog.filter((r) => r.path.startsWith('/api/v1/nodes/n1'));

  it('from the Node it was given: one PATCH, with the record, the cordon and the taint together', async () => {
    const known = await getNode(f.k, 'n1');
    const before = writes().length;
    const answer = await setAnnotationWith(f.k, 'n1', key, '{"phase":"Evacuating"}', {
      cordon: true,
      taint: ours,
      known,
    });
    expect(
      writes()
        .slice(before)
        .map((r) => r.method),
    ).toEqual(['PATCH']);
    expect(answer.metadata.resourceVersion).toBe(stored().metadata.resourceVersion);
    expect(stored().metadata.annotations?.[key]).toBe('{"phase":"Evacuating"}');
    expect(stored().spec?.unschedulable).toBe(true);
    expect(taintsOf(stored())).toEqual(['drainer.dev/evacuating=:NoSchedule']);
  });

  it("from a stale Node: the 409 makes it read again, and another writer's taint stays", async () => {
    const known = await getNode(f.k, 'n1');
    f.server.store.patch('nodes', undefined, 'n1', 'application/merge-patch+json', {
      spec: { taints: [{ key: 'theirs', effect: 'NoExecute' }] },
    });
    const before = writes().length;
    await setAnnotationWith(f.k, 'n1', key, 'v', { taint: ours, known });
    expect(
      writes()
        .slice(before)
        .map((r) => `${r.method} ${r.status}`),
    ).toEqual(['PATCH 409', 'GET 200', 'PATCH 200']);
    expect(taintsOf(stored())).toEqual(['theirs=:NoExecute', 'drainer.dev/evacuating=:NoSchedule']);
    expect(stored().metadata.annotations?.[key]).toBe('v');
    expect(stored().spec?.unschedulable).toBeFalsy();
  });

  it('pinned to a resourceVersion: a Node changed since is a ConflictError for the caller, nothing written', async () => {
    const read = await getNode(f.k, 'n1');
    const pinned = read.metadata.resourceVersion ?? '';
    f.server.store.patch('nodes', undefined, 'n1', 'application/merge-patch+json', {
      metadata: { annotations: { [key]: 'someone else' } },
    });
    const before = writes().length;
    await expect(
      setAnnotationWith(f.k, 'n1', key, 'mine', { taint: ours, known: read, resourceVersion: pinned }),
    ).rejects.toBeInstanceOf(ConflictError);
    // one PATCH on the pinned version, answered 409; no read and no second try: the caller decides
    expect(
      writes()
        .slice(before)
        .map((r) => `${r.method} ${r.status}`),
    ).toEqual(['PATCH 409']);
    expect(stored().metadata.annotations?.[key]).toBe('someone else');
    expect(taintsOf(stored())).toEqual([]);

    const now = stored().metadata.resourceVersion ?? '';
    await setAnnotationWith(f.k, 'n1', key, 'mine', { taint: ours, resourceVersion: now });
    expect(stored().metadata.annotations?.[key]).toBe('mine');
  });

  it('leaves taints and the cordon as they are when they are there already', async () => {
    await setUnschedulable(f.k, 'n1', true);
    await addTaint(f.k, 'n1', ours);
    const taintedAt = stored().spec?.taints?.[0]?.timeAdded;
    await setAnnotationWith(f.k, 'n1', key, 'v', { cordon: true, taint: ours });
    expect(stored().spec?.taints?.[0]?.timeAdded).toBe(taintedAt);
    expect(stored().metadata.annotations?.[key]).toBe('v');
  });
});
