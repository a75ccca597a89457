import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import type { ScenarioInput } from '../../../src/sandbox/scenario.ts';
import { evict, podsOn, sandbox, statusOf, taint, vmi, VMIM, waitFor } from './helpers.ts';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

type Kubevirt = NonNullable<ScenarioInput['kubevirt']>;
const kubevirt = (k: Partial<Kubevirt>): Partial<ScenarioInput> => ({ kubevirt: { installed: true, ...k } });
const migrations = (s: Sandbox) => s.kube.store.list(VMIM, { namespace: 'vms' });
const migrationsOf = (s: Sandbox, name: string) =>
  migrations(s).filter((m) => (m.spec as { vmiName: string }).vmiName === name);
const launcher = (s: Sandbox, name: string) =>
  s.kube.store
    .list('pods', { namespace: 'vms', labelSelector: `vm.kubevirt.io/name=${name}` })
    .find((p) => (p.spec as { nodeName: string }).nodeName === statusOf(vmi(s, name)).nodeName)!;

describe('KubeVirt simulation', () => {
  it('runs each VMI in a virt-launcher pod owned by it', async () => {
    sb = await sandbox(kubevirt({ vmis: [{ name: 'vm-a', namespace: 'vms', node: 'node-2' }] }));

    const v = vmi(sb, 'vm-a');
    const pod = launcher(sb, 'vm-a');

    expect(statusOf(v)).toMatchObject({ phase: 'Running', nodeName: 'node-2' });
    expect(v.metadata.labels).toMatchObject({ 'kubevirt.io/nodeName': 'node-2' });
    expect(pod.metadata.name).toMatch(/^virt-launcher-vm-a-[a-z0-9]{5}$/);
    expect(pod.metadata.labels).toMatchObject({
      'kubevirt.io': 'virt-launcher',
      'kubevirt.io/created-by': v.metadata.uid,
      'vm.kubevirt.io/name': 'vm-a',
    });
    expect(pod.metadata.annotations).toMatchObject({ 'kubevirt.io/domain': 'vm-a' });
    expect(pod.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'VirtualMachineInstance',
        name: 'vm-a',
        uid: v.metadata.uid,
        controller: true,
      }),
    ]);
    expect((pod.spec as { volumes: object[] }).volumes).toContainEqual(
      expect.objectContaining({ emptyDir: {} }),
    );
  });

  it('evacuates on the drain taint named in the KubeVirt CR, only VMIs that live-migrate', async () => {
    sb = await sandbox(
      kubevirt({
        nodeDrainTaintKey: 'example.com/evacuate',
        vmis: [
          { name: 'vm-live', namespace: 'vms', node: 'node-1', evictionStrategy: 'LiveMigrate' },
          { name: 'vm-none', namespace: 'vms', node: 'node-1', evictionStrategy: 'None' },
        ],
      }),
    );
    taint(sb, 'node-1', 'kubevirt.io/drain'); // the default key means nothing here
    await sb.clock.sleep(2000);
    expect(migrations(sb)).toHaveLength(0);
    const sourcePod = launcher(sb, 'vm-live').metadata.name!;

    taint(sb, 'node-1', 'example.com/evacuate');

    await waitFor(() => statusOf(vmi(sb!, 'vm-live')).migrationState?.completed);
    const [m] = migrationsOf(sb, 'vm-live');
    expect(m!.metadata.name).toMatch(/^kubevirt-evacuation-/);
    expect(m!.metadata.annotations).toMatchObject({ 'kubevirt.io/evacuationMigration': 'node-1' });
    expect(statusOf(m!).phase).toBe('Succeeded');
    expect(statusOf(m!).phaseTransitionTimestamps.map((p: { phase: string }) => p.phase)).toEqual([
      'Pending',
      'Scheduling',
      'Scheduled',
      'PreparingTarget',
      'TargetReady',
      'Running',
      'Succeeded',
    ]);
    const moved = vmi(sb, 'vm-live');
    const target = statusOf(moved).nodeName;
    expect(['node-2', 'node-3']).toContain(target);
    expect(moved.metadata.labels?.['kubevirt.io/nodeName']).toBe(target);
    expect(statusOf(moved).migrationState).toMatchObject({
      sourceNode: 'node-1',
      targetNode: target,
      completed: true,
      failed: false,
      migrationUid: m!.metadata.uid,
      startTimestamp: expect.any(String),
      endTimestamp: expect.any(String),
    });
    await waitFor(() => !sb!.kube.store.find('pods', 'vms', sourcePod));
    expect(migrationsOf(sb, 'vm-none')).toHaveLength(0);
    expect(statusOf(vmi(sb, 'vm-none')).nodeName).toBe('node-1');
  });

  it('answers the eviction of a launcher pod with 429 and migrates the VMI (pod-eviction-admitter.go admitLauncherPod)', async () => {
    sb = await sandbox(
      kubevirt({
        vmis: [
          {
            name: 'vm-a',
            namespace: 'vms',
            node: 'node-1',
            evictionStrategy: 'LiveMigrate',
            migrationSeconds: 30,
          },
        ],
      }),
    );
    const pod = launcher(sb, 'vm-a').metadata.name!;

    const first = await evict(sb, 'vms', pod);
    const again = await evict(sb, 'vms', pod);

    expect(first.code).toBe(429);
    expect(first.body.message).toBe(
      'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: Eviction triggered evacuation of VMI "vms/vm-a"',
    );
    expect(again.code).toBe(429);
    expect(again.body.message).toMatch(
      /denied the request: Evacuation in progress: Eviction triggered evacuation of VMI "vms\/vm-a"$/,
    );
    expect(statusOf(vmi(sb, 'vm-a')).evacuationNodeName).toBe('node-1');
    await waitFor(() => migrationsOf(sb!, 'vm-a').length === 1);
    await waitFor(() => statusOf(vmi(sb!, 'vm-a')).nodeName !== 'node-1');
    expect(statusOf(vmi(sb, 'vm-a')).evacuationNodeName).toBeUndefined();
    expect(migrationsOf(sb, 'vm-a')).toHaveLength(1);
  });

  it('lets the eviction through for strategy None: the VMI stops', async () => {
    sb = await sandbox(
      kubevirt({ vmis: [{ name: 'vm-a', namespace: 'vms', node: 'node-1', evictionStrategy: 'None' }] }),
    );

    const res = await evict(sb, 'vms', launcher(sb, 'vm-a').metadata.name!);

    expect(res.code).toBe(201);
    await waitFor(() => statusOf(vmi(sb!, 'vm-a')).phase === 'Succeeded');
    expect(migrations(sb)).toHaveLength(0);
  });

  it('marks External VMIs on eviction only, never under the drain taint, and migrates none (evacuation.go: VMIMigratableOnEviction)', async () => {
    sb = await sandbox(
      kubevirt({
        evictionStrategy: 'External',
        vmis: [
          { name: 'vm-a', namespace: 'vms', node: 'node-1' },
          { name: 'vm-b', namespace: 'vms', node: 'node-2' },
        ],
      }),
    );
    taint(sb, 'node-2', 'kubevirt.io/drain');

    const res = await evict(sb, 'vms', launcher(sb, 'vm-a').metadata.name!);

    expect(res.code).toBe(429);
    expect(statusOf(vmi(sb, 'vm-a')).evacuationNodeName).toBe('node-1');
    await sb.clock.sleep(2000);
    expect(migrations(sb)).toHaveLength(0);
    expect(statusOf(vmi(sb, 'vm-b')).evacuationNodeName).toBeUndefined();
  });

  it('keeps a non-migratable LiveMigrate VMI where it is and blocks its eviction', async () => {
    sb = await sandbox(
      kubevirt({
        vmis: [
          {
            name: 'vm-a',
            namespace: 'vms',
            node: 'node-1',
            evictionStrategy: 'LiveMigrate',
            migratable: false,
          },
        ],
      }),
    );
    expect(statusOf(vmi(sb, 'vm-a')).conditions).toContainEqual(
      expect.objectContaining({ type: 'LiveMigratable', status: 'False', reason: 'DisksNotLiveMigratable' }),
    );

    taint(sb, 'node-1', 'kubevirt.io/drain');
    const res = await evict(sb, 'vms', launcher(sb, 'vm-a').metadata.name!);

    expect(res.code).toBe(429);
    expect(res.body.message).toMatch(
      /denied the request: VMI vm-a is configured with an eviction strategy but is not live-migratable$/,
    );
    await sb.clock.sleep(2000);
    expect(migrations(sb)).toHaveLength(0);
    expect(statusOf(vmi(sb, 'vm-a'))).toMatchObject({ phase: 'Running', nodeName: 'node-1' });
  });

  it('respects parallelMigrationsPerCluster and parallelOutboundMigrationsPerNode', async () => {
    const vmis = ['node-1', 'node-2'].flatMap((node) =>
      Array.from({ length: 4 }, (_, i) => ({ name: `vm-${node}-${i}`, namespace: 'vms', node })),
    );
    sb = await sandbox({
      nodes: [{ name: 'node-1' }, { name: 'node-2' }, { name: 'node-3' }, { name: 'node-4' }],
      ...kubevirt({
        evictionStrategy: 'LiveMigrate',
        parallelMigrationsPerCluster: 3,
        parallelOutboundMigrationsPerNode: 2,
        vmis,
      }),
    });

    taint(sb, 'node-1', 'kubevirt.io/drain');
    taint(sb, 'node-2', 'kubevirt.io/drain');

    await waitFor(
      () => vmis.every((v) => !['node-1', 'node-2'].includes(statusOf(vmi(sb!, v.name)).nodeName)),
      15_000,
    );
    const seen = sb.controllers.migrations;
    expect(seen.maxInFlight).toBe(3);
    expect(Math.max(...seen.maxInFlightPerNode.values())).toBe(2);
    expect(migrations(sb).every((m) => statusOf(m).phase === 'Succeeded')).toBe(true);
  });

  it('retries a failed evacuation migration after a backoff', async () => {
    sb = await sandbox(
      kubevirt({
        evictionStrategy: 'LiveMigrate',
        vmis: [{ name: 'vm-a', namespace: 'vms', node: 'node-1', failFirstAttempts: 1 }],
      }),
    );

    taint(sb, 'node-1', 'kubevirt.io/drain');

    await waitFor(() => statusOf(vmi(sb!, 'vm-a')).nodeName !== 'node-1');
    const phases = migrationsOf(sb, 'vm-a').map((m) => statusOf(m).phase);
    expect(phases.sort()).toEqual(['Failed', 'Succeeded']);
    expect(statusOf(vmi(sb, 'vm-a')).migrationState).toMatchObject({ completed: true, failed: false });
  });

  it('aborts a running migration when its VirtualMachineInstanceMigration is deleted', async () => {
    sb = await sandbox(
      kubevirt({ vmis: [{ name: 'vm-a', namespace: 'vms', node: 'node-1', migrationSeconds: 600 }] }),
    );
    sb.kube.store.create(VMIM, {
      metadata: { name: 'move-a', namespace: 'vms' },
      spec: { vmiName: 'vm-a' },
    });
    await waitFor(() => statusOf(sb!.kube.store.get(VMIM, 'vms', 'move-a')).phase === 'Running');
    const targetPod = statusOf(vmi(sb, 'vm-a')).migrationState.targetPod as string;
    expect(sb.kube.store.find('pods', 'vms', targetPod)).toBeDefined();

    sb.kube.store.delete(VMIM, 'vms', 'move-a');

    await waitFor(() => !sb!.kube.store.find(VMIM, 'vms', 'move-a'));
    expect(statusOf(vmi(sb, 'vm-a'))).toMatchObject({
      phase: 'Running',
      nodeName: 'node-1',
      migrationState: { abortStatus: 'Succeeded', failed: true },
    });
    await waitFor(() => !sb!.kube.store.find('pods', 'vms', targetPod));
    expect(podsOn(sb, 'node-1', 'kubevirt.io=virt-launcher')).toHaveLength(1);
  });
});
