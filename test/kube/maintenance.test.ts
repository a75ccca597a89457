import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/errors.ts';
import {
  addNodeMaintenanceFinalizer,
  getNodeMaintenance,
  listNodeMaintenances,
  patchNodeMaintenanceStatus,
  removeNodeMaintenanceFinalizer,
} from '../../src/kube/maintenance.ts';
import type { NodeMaintenance } from '../../src/kube/types.ts';
import { startFixture, type KubeFixture } from './sandbox.ts';

const MEDIK8S = 'nodemaintenances.nodemaintenance.medik8s.io';
const LEGACY = 'nodemaintenances.nodemaintenance.kubevirt.io';

let f: KubeFixture;
beforeEach(async () => {
  f = await startFixture();
});
afterEach(() => f.close());

function nm(res: string, name: string, nodeName: string): void {
  const group = res.slice('nodemaintenances.'.length);
  f.server.store.create(res, {
    apiVersion: `${group}/v1beta1`,
    kind: 'NodeMaintenance',
    metadata: { name },
    spec: { nodeName, reason: 'test' },
  });
}

describe('NodeMaintenance access', () => {
  it('lists both API groups, each item with its own apiVersion', async () => {
    nm(MEDIK8S, 'm1', 'n1');
    nm(LEGACY, 'old', 'n2');
    const { items, missingGroups } = await listNodeMaintenances(f.k);
    expect(items.map((i) => `${i.apiVersion} ${i.metadata.name} ${i.spec?.nodeName}`).sort()).toEqual([
      'nodemaintenance.kubevirt.io/v1beta1 old n2',
      'nodemaintenance.medik8s.io/v1beta1 m1 n1',
    ]);
    expect(missingGroups).toEqual([]);
  });

  it('skips a group whose CRD is not installed', async () => {
    nm(MEDIK8S, 'm1', 'n1');
    f.server.store.delete('customresourcedefinitions.apiextensions.k8s.io', undefined, LEGACY);
    const { items, missingGroups } = await listNodeMaintenances(f.k);
    expect(items.map((i) => i.metadata.name)).toEqual(['m1']);
    expect(missingGroups).toEqual(['nodemaintenance.kubevirt.io']);
  });

  it('writes status only on the version it read (409 ConflictError otherwise)', async () => {
    nm(MEDIK8S, 'm1', 'n1');
    const read = await getNodeMaintenance(f.k, 'nodemaintenance.medik8s.io', 'm1');
    const written = await patchNodeMaintenanceStatus(f.k, read, { phase: 'Running', totalpods: 3 });
    expect(written.status).toMatchObject({ phase: 'Running', totalpods: 3 });
    expect(written.spec?.nodeName).toBe('n1');

    await expect(patchNodeMaintenanceStatus(f.k, read, { phase: 'Failed' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    const stored = f.server.store.get(MEDIK8S, undefined, 'm1') as NodeMaintenance;
    expect(stored.status?.phase).toBe('Running');
  });

  it('adds and removes our finalizer without touching the others', async () => {
    nm(LEGACY, 'm1', 'n1');
    const read = await getNodeMaintenance(f.k, 'nodemaintenance.kubevirt.io', 'm1');
    f.server.store.patch(LEGACY, undefined, 'm1', 'application/merge-patch+json', {
      metadata: { finalizers: ['someone.else/keep'] },
    });
    expect(
      await addNodeMaintenanceFinalizer(f.k, read, 'drainer.dev/maintenance', { 'drainer.dev/owner': 'n1' }),
    ).toBe(true);
    expect(await addNodeMaintenanceFinalizer(f.k, read, 'drainer.dev/maintenance')).toBe(false);
    let stored = f.server.store.get(LEGACY, undefined, 'm1') as NodeMaintenance;
    expect(stored.metadata.finalizers).toEqual(['someone.else/keep', 'drainer.dev/maintenance']);
    expect(stored.metadata.annotations?.['drainer.dev/owner']).toBe('n1');

    expect(await removeNodeMaintenanceFinalizer(f.k, read, 'drainer.dev/maintenance')).toBe(true);
    stored = f.server.store.get(LEGACY, undefined, 'm1');
    expect(stored.metadata.finalizers).toEqual(['someone.else/keep']);
  });
});
