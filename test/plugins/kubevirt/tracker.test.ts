// The tracker follows a VMI by its uid, not its name (issue 48): a VMI deleted and created again
// under its old name is a new object. One that is not on the node left it (its owner's doing, not
// a failure); one on the node is a new workload, with none of the old one's migrations. And a
// VMI's deadline runs only while a migration of it runs: waiting in KubeVirt's queue, for a first
// attempt or a retry, is not timed.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/observability/logger.ts';
import { classify } from '../../../src/plugins/kubevirt/classify.ts';
import type { KubevirtApi } from '../../../src/plugins/kubevirt/port.ts';
import { Tracker } from '../../../src/plugins/kubevirt/tracker.ts';
import type { ClusterSettings, Vmi, Vmim } from '../../../src/plugins/kubevirt/types.ts';

const SETTINGS: ClusterSettings = {
  installed: true,
  drainTaintKey: 'kubevirt.io/drain',
  evictionStrategy: 'LiveMigrate',
  parallelMigrationsPerCluster: 1,
  parallelOutboundMigrationsPerNode: 2,
};

const vmiOn = (uid: string, node: string | undefined, created: string, more: Vmi['status'] = {}): Vmi => ({
  metadata: { name: 'vm-a', namespace: 'vms', uid, creationTimestamp: created },
  spec: { evictionStrategy: 'LiveMigrate' },
  status: {
    phase: node ? 'Running' : 'Pending',
    ...(node ? { nodeName: node } : {}),
    conditions: [{ type: 'LiveMigratable', status: 'True' }],
    ...more,
  },
});

const migration = (name: string, created: string, phase: string): Vmim => ({
  metadata: { name, namespace: 'vms', uid: `uid-${name}`, creationTimestamp: created },
  spec: { vmiName: 'vm-a' },
  status: { phase },
});

/** The cluster as the tracker reads it: VMIs and migrations the story sets, a clock it moves. */
function cluster() {
  const state = { vmis: [] as Vmi[], migrations: [] as Vmim[], now: 0 };
  const api = {
    listVmis: async (node: string) => state.vmis.filter((v) => v.status?.nodeName === node),
    getVmi: async (_ns: string, name: string) => state.vmis.find((v) => v.metadata.name === name),
    listMigrations: async () => state.migrations,
  } as Partial<KubevirtApi> as KubevirtApi;
  const tracker = new Tracker({
    node: 'node-1',
    api,
    log: silentLogger(),
    now: () => state.now,
    deadline: () => ({ ms: 10_000, why: 'kubevirt.migrationTimeout' }),
  });
  /** One poll at `ms` on the clock, with these migrations in the cluster. */
  const at = async (ms: number, migrations: Vmim[]) => {
    state.now = ms;
    state.migrations = migrations;
    await tracker.poll(new AbortController().signal);
  };
  return { state, tracker, at };
}

const signal = new AbortController().signal;
const followed = (first: Vmi) => classify(first, SETTINGS, 'block');

describe('the KubeVirt tracker knows a VMI by its uid', () => {
  it('a VMI created again under its name on another node left this one: skipped, not pending', async () => {
    const { state, tracker } = cluster();
    const first = vmiOn('uid-1', 'node-1', '2026-01-01T00:00:00Z');
    state.vmis = [first];
    state.migrations = [migration('m1', '2026-01-01T00:00:10Z', 'Pending')];
    tracker.begin([followed(first)]);
    await tracker.poll(signal);

    // its owner restarts the VM: the old VMI goes, a new one of the same name runs on node-2
    state.vmis = [vmiOn('uid-2', 'node-2', '2026-01-01T00:01:00Z')];
    state.migrations = [migration('m1', '2026-01-01T00:00:10Z', 'Failed')];
    await tracker.poll(signal);

    expect(tracker.pending()).toEqual([]);
    expect(tracker.failed()).toBe(false);
    expect(tracker.progress(followed(first))).toMatchObject({
      id: 'uid-1',
      state: 'skipped',
      message: expect.stringMatching(/created again under its name .*uid-2.* on node node-2/),
    });
  });

  it('a VMI created again under its name with no node yet left this one too', async () => {
    const { state, tracker } = cluster();
    const first = vmiOn('uid-1', 'node-1', '2026-01-01T00:00:00Z');
    state.vmis = [first];
    tracker.begin([followed(first)]);

    state.vmis = [vmiOn('uid-2', undefined, '2026-01-01T00:01:00Z')];
    await tracker.poll(signal);

    expect(tracker.pending()).toEqual([]);
    expect(tracker.progress(followed(first))).toMatchObject({
      state: 'skipped',
      message: expect.stringMatching(/not scheduled yet/),
    });
  });

  it('a VMI created again under its name on this node is a new workload, without the old one migrations', async () => {
    const { state, tracker } = cluster();
    const first = vmiOn('uid-1', 'node-1', '2026-01-01T00:00:00Z');
    state.vmis = [first];
    state.migrations = [migration('m1', '2026-01-01T00:00:10Z', 'Running')];
    tracker.begin([followed(first)]);
    await tracker.poll(signal);

    const second = vmiOn('uid-2', 'node-1', '2026-01-01T00:01:00Z');
    state.vmis = [second];
    state.migrations = [migration('m1', '2026-01-01T00:00:10Z', 'Failed')];
    state.now = 5_000;
    await tracker.poll(signal);

    expect(tracker.pending()).toEqual(['vms/vm-a']);
    expect(tracker.vmi('vms/vm-a')?.metadata.uid).toBe('uid-2');
    expect(tracker.notStarted()).toEqual(['vms/vm-a']);
    expect(tracker.seen('vms/vm-a')).toEqual({ total: 0, open: false, failed: 0 });
    expect(tracker.progress(followed(first))).toMatchObject({
      id: 'uid-2',
      state: 'pending',
      attempts: 0,
      message: 'waiting for KubeVirt to start a migration',
    });

    // KubeVirt moves the new one
    state.migrations = [...state.migrations, migration('m2', '2026-01-01T00:01:05Z', 'Succeeded')];
    state.vmis = [
      vmiOn('uid-2', 'node-3', '2026-01-01T00:01:00Z', {
        migrationState: { completed: true, failed: false, targetNode: 'node-3', migrationUid: 'uid-m2' },
      }),
    ];
    await tracker.poll(signal);
    expect(tracker.progress(followed(first))).toMatchObject({ id: 'uid-2', state: 'succeeded', attempts: 1 });
  });
});

describe('the KubeVirt tracker times only a running migration', () => {
  it('a retry queued behind others past the per-VMI deadline is still followed, and moves', async () => {
    const { state, tracker, at } = cluster();
    const first = vmiOn('uid-1', 'node-1', '2026-01-01T00:00:00Z');
    state.vmis = [first];
    tracker.begin([followed(first)]);

    // queued 60 s for the first attempt, runs 6 s and fails, its retry queued 60 s, runs 3 s
    await at(0, [migration('m1', '2026-01-01T00:00:01Z', 'Pending')]);
    await at(60_000, [migration('m1', '2026-01-01T00:00:01Z', 'Running')]);
    await at(66_000, [
      migration('m1', '2026-01-01T00:00:01Z', 'Failed'),
      migration('m2', '2026-01-01T00:01:07Z', 'Pending'),
    ]);
    await at(126_000, [
      migration('m1', '2026-01-01T00:00:01Z', 'Failed'),
      migration('m2', '2026-01-01T00:01:07Z', 'Scheduling'),
    ]);
    await at(129_000, [
      migration('m1', '2026-01-01T00:00:01Z', 'Failed'),
      migration('m2', '2026-01-01T00:01:07Z', 'Running'),
    ]);

    expect(tracker.failed()).toBe(false);
    expect(tracker.pending()).toEqual(['vms/vm-a']);
    expect(tracker.progress(followed(first))).toMatchObject({ state: 'migrating', attempts: 2 });

    // 6 s + 5 s of running migrations: past the 10 s deadline
    await at(131_000, [
      migration('m1', '2026-01-01T00:00:01Z', 'Failed'),
      migration('m2', '2026-01-01T00:01:07Z', 'Running'),
    ]);
    expect(tracker.progress(followed(first))).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/^not migrated within 10s \(kubevirt\.migrationTimeout\)/),
    });
  });
});

describe("the KubeVirt tracker times KubeVirt's backoff after a failed evacuation attempt", () => {
  // KubeVirt (pkg/virt-controller/watch/migration, handleMigrationBackoff) holds the next evacuation migration of
  // a VMI Pending for 20 s after its first failure, 40 s after the second, doubling: that wait is the VMI failing
  // to move, not a queue, so the deadline runs through it (seen on the real suite: attempts that fail in 5 s were
  // never timed out, the node stayed Evacuating until the evacuation's deadline)
  const evacuation = (name: string, created: string, phase: string): Vmim => ({
    ...migration(name, created, phase),
    metadata: {
      ...migration(name, created, phase).metadata,
      annotations: { 'kubevirt.io/evacuationMigration': 'node-1' },
    },
  });

  it('counts the backoff window, not the queue wait after it, and fails the VMI past the deadline', async () => {
    const { state, tracker, at } = cluster();
    const first = vmiOn('uid-1', 'node-1', '2026-01-01T00:00:00Z');
    state.vmis = [first];
    tracker.begin([followed(first)]);
    const m1 = (phase: string) => evacuation('m1', '2026-01-01T00:00:01Z', phase);
    const m2 = (phase: string) => evacuation('m2', '2026-01-01T00:00:05Z', phase);

    // the first attempt runs 4 s and fails; KubeVirt holds the retry 20 s, then it waits in the queue
    await at(0, [m1('Running')]);
    await at(4_000, [m1('Failed'), m2('Pending')]);
    await at(9_000, [m1('Failed'), m2('Pending')]);
    expect(tracker.failed()).toBe(false);
    // 4 s running + 6 s of the 20 s backoff: past the 10 s deadline
    await at(10_001, [m1('Failed'), m2('Pending')]);
    expect(tracker.progress(followed(first))).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/^not migrated within 10s \(kubevirt\.migrationTimeout\)/),
    });
  });

  it('doubles the window with each failure, as KubeVirt does, and says so while it holds the retry', async () => {
    const { state, tracker, at } = cluster();
    const first = vmiOn('uid-1', 'node-1', '2026-01-01T00:00:00Z');
    state.vmis = [first];
    tracker.begin([followed(first)]);
    // a deadline of 10 s would end at the first backoff: here the windows are measured against a long one
    const m = (name: string, phase: string) => evacuation(name, `2026-01-01T00:00:0${name.at(-1)}Z`, phase);
    await at(0, [m('m1', 'Running')]);
    await at(1_000, [m('m1', 'Failed'), m('m2', 'Pending')]);
    expect(tracker.progress(followed(first)).message).toMatch(/KubeVirt's backoff \(20s\)/);
    await at(2_000, [m('m1', 'Failed'), m('m2', 'Running')]);
    await at(3_000, [m('m1', 'Failed'), m('m2', 'Failed'), m('m3', 'Pending')]);
    expect(tracker.progress(followed(first)).message).toMatch(/KubeVirt's backoff \(40s\)/);
  });
});
