// Story: the node is uncordoned while a VMI migrates. By default the migration runs to its end;
// with evacuation.abortOnCancel drainer takes its taint back and deletes the migration, which
// KubeVirt aborts. An agent shutdown aborts nothing: the next agent resumes.
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../../src/errors.ts';
import type { KubeObject } from '../../../src/sandbox/kube/types.ts';
import {
  byName,
  context,
  evictionPosts,
  migrationsOf,
  nodeOf,
  taints,
  until,
  vm,
  worldPerTest,
  type World,
} from './harness.ts';

const world = worldPerTest();

const phase = (m: KubeObject | undefined) => (m?.status as { phase?: string } | undefined)?.phase;

/** Evacuates node-1 and aborts with `reason` once vm-a's migration is Running. */
async function interrupted(w: World, reason: Error, abortOnCancel: boolean) {
  const stop = new AbortController();
  const ctx = context({ signal: stop.signal, abortOnCancel });
  const running = w.plugin().evacuate({ name: 'node-1' }, ctx);
  await until('vm-a migrating', () => phase(migrationsOf(w, 'vm-a')[0]) === 'Running');
  stop.abort(reason);
  return { outcome: await running, ctx };
}

describe('KubeVirt plugin, cancel', () => {
  it('without abortOnCancel: returns at once, naming the VMI that stayed, and lets the migration finish', async () => {
    const w = await world({ vmis: [vm('vm-a', { migrationSeconds: 30 })] });

    const { outcome, ctx } = await interrupted(w, new CancelledError('node uncordoned'), false);

    expect(outcome.succeeded).toBe(false);
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ state: 'failed', message: 'node uncordoned' });
    expect(nodeOf(w, 'vm-a')).toBe('node-1');
    expect(ctx.saved()?.taint).toBeDefined(); // restore takes it back
    const [m] = migrationsOf(w, 'vm-a');
    expect(m?.metadata.deletionTimestamp).toBeUndefined();
    await until('migration finished', () => phase(migrationsOf(w, 'vm-a')[0]) === 'Succeeded');
  });

  it('with abortOnCancel: removes its taint and deletes the migration; KubeVirt aborts it and starts no other', async () => {
    const w = await world({ vmis: [vm('vm-a', { migrationSeconds: 30 })] });

    const { outcome, ctx } = await interrupted(w, new CancelledError('node uncordoned'), true);

    expect(byName(outcome)['vms/vm-a']?.state).toBe('failed');
    expect(taints(w)).toEqual([]);
    expect(ctx.saved()).toEqual({});
    const aborted = await until('migration aborted', () => {
      const m = migrationsOf(w, 'vm-a')[0];
      return !m || phase(m) === 'Failed' ? (m ?? 'gone') : undefined;
    });
    expect(aborted).toBeDefined();
    expect(w.sb.kube.requestLog).toContainEqual(
      expect.objectContaining({
        method: 'DELETE',
        path: expect.stringMatching(
          /^\/apis\/kubevirt\.io\/v1\/namespaces\/vms\/virtualmachineinstancemigrations\/kubevirt-evacuation-/,
        ),
      }),
    );
    await w.sb.clock.sleep(20_000); // longer than KubeVirt's retry backoff
    expect(nodeOf(w, 'vm-a')).toBe('node-1');
    expect(migrationsOf(w, 'vm-a').filter((m) => phase(m) !== 'Failed')).toEqual([]);
  });

  it('an agent shutdown aborts nothing, even with abortOnCancel: the taint and migration stay', async () => {
    const w = await world({ vmis: [vm('vm-a', { migrationSeconds: 30 })] });

    const { ctx } = await interrupted(w, new Error('SIGTERM'), true);

    expect(taints(w)).toContainEqual(expect.objectContaining({ key: 'kubevirt.io/drain' }));
    expect(ctx.saved()?.taint).toBeDefined();
    expect(migrationsOf(w, 'vm-a')[0]?.metadata.deletionTimestamp).toBeUndefined();
    await until('migration finished', () => phase(migrationsOf(w, 'vm-a')[0]) === 'Succeeded');
  });

  it('a restarted agent resumes from the record: no second trigger, the running migration followed to its end', async () => {
    const w = await world({ vmis: [vm('vm-a', { migrationSeconds: 30 })] });
    const { ctx } = await interrupted(w, new Error('SIGTERM'), false);

    const resumed = context({ record: ctx.saved() });
    const outcome = await w
      .plugin({ trigger: 'both', triggerGraceSeconds: 0 })
      .evacuate({ name: 'node-1' }, resumed);

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(migrationsOf(w, 'vm-a')).toHaveLength(1);
    expect(evictionPosts(w)).toEqual([]);
    expect(resumed.saved() ?? resumed.record).toEqual({
      taint: { key: 'kubevirt.io/drain', effect: 'NoSchedule' },
    });
  });

  describe('eviction marks (trigger: eviction), evacuate/cancel found by discovery', () => {
    const evacuationNodeName = (w: World, name: string) =>
      (
        w.sb.kube.store.get('virtualmachineinstances.kubevirt.io', 'vms', name).status as {
          evacuationNodeName?: string;
        }
      ).evacuationNodeName;

    /** Evacuates node-1 by eviction and cancels once vm-a's migration runs (vm-b still queued). */
    async function cancelledByEviction(w: World) {
      const stop = new AbortController();
      const ctx = context({ signal: stop.signal, abortOnCancel: true });
      const running = w.plugin({ trigger: 'eviction' }).evacuate({ name: 'node-1' }, ctx);
      await until('vm-a migrating', () => phase(migrationsOf(w, 'vm-a')[0]) === 'Running');
      stop.abort(new CancelledError('node uncordoned'));
      return running;
    }

    it('v1.9: cancel with abortOnCancel un-marks the evicted VMIs (PUT evacuate/cancel), so KubeVirt starts no migration again', async () => {
      const w = await world({
        parallelOutboundMigrationsPerNode: 1,
        vmis: [vm('vm-a', { migrationSeconds: 30 }), vm('vm-b', { migrationSeconds: 30 })],
      });

      await cancelledByEviction(w);

      expect(evacuationNodeName(w, 'vm-a')).toBeUndefined();
      expect(evacuationNodeName(w, 'vm-b')).toBeUndefined();
      const cancels = w.sb.kube.requestLog.filter((r) => r.path.endsWith('/evacuate/cancel'));
      expect(cancels.map((r) => [r.method, r.path, r.status])).toEqual(
        expect.arrayContaining([
          [
            'PUT',
            '/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-a/evacuate/cancel',
            200,
          ],
          [
            'PUT',
            '/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-b/evacuate/cancel',
            200,
          ],
        ]),
      );
      await w.sb.clock.sleep(20_000); // longer than KubeVirt's retry backoff
      for (const name of ['vm-a', 'vm-b']) {
        expect(nodeOf(w, name)).toBe('node-1');
        expect(migrationsOf(w, name).filter((m) => phase(m) !== 'Failed')).toEqual([]);
      }
    });

    it('v1.6: KubeVirt serves no evacuate/cancel, so the marks stay (the documented limitation) and nothing is PUT', async () => {
      const w = await world({
        version: 'v1.6',
        parallelOutboundMigrationsPerNode: 1,
        vmis: [vm('vm-a', { migrationSeconds: 30 }), vm('vm-b', { migrationSeconds: 30 })],
      });

      await cancelledByEviction(w);

      expect(w.sb.kube.requestLog).toContainEqual(
        expect.objectContaining({ method: 'GET', path: '/apis/subresources.kubevirt.io/v1', status: 200 }),
      );
      expect(w.sb.kube.requestLog.filter((r) => r.path.endsWith('/evacuate/cancel'))).toEqual([]);
      expect(evacuationNodeName(w, 'vm-b')).toBe('node-1'); // KubeVirt will migrate it again
    });
  });
});
