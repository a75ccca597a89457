// The KubeVirt emulation follows KubeVirt's source, version by version (kubevirt.version in the
// scenario, default v1.9). Each test names the KubeVirt file and function it follows.
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import type { KubeObject } from '../../../src/sandbox/kube/types.ts';
import type { ScenarioInput } from '../../../src/sandbox/scenario.ts';
import { cordon, evict, sandbox, statusOf, taint, vmi, VMIM, waitFor } from './helpers.ts';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

type Kubevirt = NonNullable<ScenarioInput['kubevirt']>;
const kubevirt = (k: Partial<Kubevirt>): Partial<ScenarioInput> => ({ kubevirt: { installed: true, ...k } });
const vms = (n: number, more: Partial<Kubevirt['vmis'] extends (infer V)[] | undefined ? V : never> = {}) =>
  Array.from({ length: n }, (_, i) => ({
    name: `vm-${i + 1}`,
    namespace: 'vms',
    node: 'node-1',
    evictionStrategy: 'LiveMigrate' as const,
    ...more,
  }));
const migrations = (s: Sandbox) => s.kube.store.list(VMIM, { namespace: 'vms' });
const phase = (o: KubeObject) => (o.status as { phase?: string } | undefined)?.phase;
const events = (s: Sandbox) =>
  s.kube.store
    .list('events', { namespace: 'vms' })
    .map((e) => `${e.reason as string}: ${e.message as string}`);

async function api(s: Sandbox, method: string, path: string, body?: unknown) {
  const res = await fetch(`${s.kube.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { code: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const migration = (vmiName: string, name = `move-${vmiName}`) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstanceMigration',
  metadata: { name, namespace: 'vms' },
  spec: { vmiName },
});

describe('KubeVirt emulation, evacuation by version (evacuation.go sync, migration.go)', () => {
  it('v1.9: a migration for every VMI at once; the migration controller runs 2 per node and holds the rest Pending', async () => {
    sb = await sandbox(kubevirt({ migrationSeconds: 10, vmis: vms(5) }));

    taint(sb, 'node-1', 'kubevirt.io/drain');

    // every VMI has its migration; 2 of them left Pending, 3 wait
    await waitFor(
      () =>
        migrations(sb!).length === 5 && migrations(sb!).filter((m) => phase(m) === 'Pending').length === 3,
    );
    await waitFor(() => vms(5).every((v) => statusOf(vmi(sb!, v.name)).nodeName !== 'node-1'), 15_000);
    expect(sb.controllers.migrations.maxInFlightPerNode.get('node-1')).toBe(2);
  });

  it('v1.8: the evacuation controller creates no more migrations than may run', async () => {
    sb = await sandbox(kubevirt({ version: 'v1.8', migrationSeconds: 10, vmis: vms(5) }));
    let most = 0;
    sb.kube.store.subscribe(VMIM, () => {
      most = Math.max(
        most,
        migrations(sb!).filter((m) => !['Succeeded', 'Failed'].includes(phase(m) ?? '')).length,
      );
    });

    taint(sb, 'node-1', 'kubevirt.io/drain');

    await waitFor(() => vms(5).every((v) => statusOf(vmi(sb!, v.name)).nodeName !== 'node-1'), 15_000);
    expect(most).toBe(2);
  });

  it('after a failure, the next evacuation migration is created at once and held Pending 20 s (handleMigrationBackoff)', async () => {
    sb = await sandbox(kubevirt({ vmis: vms(1, { failFirstAttempts: 1 }) }));

    taint(sb, 'node-1', 'kubevirt.io/drain');

    await waitFor(() => migrations(sb!).some((m) => phase(m) === 'Failed'));
    const failedAt = sb.clock.now();
    const retry = await waitFor(() => migrations(sb!).find((m) => phase(m) === 'Pending'));
    await sb.clock.sleep(15_000);
    expect(phase(sb.kube.store.get(VMIM, 'vms', retry.metadata.name!))).toBe('Pending');
    expect(events(sb)).toContain('MigrationBackoff: backoff migrating vmi vms/vm-1');
    await waitFor(() => phase(sb!.kube.store.get(VMIM, 'vms', retry.metadata.name!)) !== 'Pending');
    expect(sb.clock.now() - failedAt).toBeGreaterThan(19_000); // the clock ticks in real milliseconds (50 simulated)
  });
});

describe('KubeVirt emulation, the migration controller (migration.go)', () => {
  it("writes the VMI's migrationState at the handoff, and the VMIM's only once final", async () => {
    sb = await sandbox(kubevirt({ vmis: vms(1, { migrationSeconds: 5 }) }));
    const seen: string[] = [];
    sb.kube.store.subscribe(VMIM, (_t, m) => {
      const own = (m.status as { migrationState?: { targetNode?: string } } | undefined)?.migrationState;
      const onVmi = statusOf(vmi(sb!, 'vm-1')).migrationState?.migrationUid === m.metadata.uid;
      seen.push(`${phase(m) ?? ''}:${own?.targetNode ? 'vmim' : '-'}:${onVmi ? 'vmi' : '-'}`);
    });

    sb.kube.store.create(VMIM, migration('vm-1'));

    await waitFor(() => phase(sb!.kube.store.get(VMIM, 'vms', 'move-vm-1')) === 'Succeeded');
    const byPhase = Object.fromEntries(seen.map((s) => [s.split(':')[0], s]));
    expect(byPhase).toMatchObject({
      Scheduling: 'Scheduling:-:-',
      Scheduled: 'Scheduled:-:-',
      PreparingTarget: 'PreparingTarget:-:vmi',
      Running: 'Running:-:vmi',
      Succeeded: 'Succeeded:vmim:vmi',
    });
  });

  it('with no room for the target it creates the pod anyway, holds the slot in Scheduling and fails after 5 min unschedulable', async () => {
    sb = await sandbox(kubevirt({ vmis: vms(1) }));
    cordon(sb, 'node-2');
    cordon(sb, 'node-3');

    sb.kube.store.create(VMIM, migration('vm-1'));

    await waitFor(() => phase(sb!.kube.store.get(VMIM, 'vms', 'move-vm-1')) === 'Scheduling');
    const target = sb.kube.store
      .list('pods', { namespace: 'vms', labelSelector: 'kubevirt.io/migrationJobUID' })
      .find((p) => !(p.spec as { nodeName?: string }).nodeName);
    expect(target?.status).toMatchObject({
      phase: 'Pending',
      conditions: [expect.objectContaining({ type: 'PodScheduled', reason: 'Unschedulable' })],
    });
    await sb.clock.sleep(4 * 60_000);
    expect(phase(sb.kube.store.get(VMIM, 'vms', 'move-vm-1'))).toBe('Scheduling');
    await waitFor(() => phase(sb!.kube.store.get(VMIM, 'vms', 'move-vm-1')) === 'Failed', 10_000);
    const m = sb.kube.store.get(VMIM, 'vms', 'move-vm-1');
    expect(
      (m.status as { migrationState?: { targetNode?: string } }).migrationState?.targetNode,
    ).toBeUndefined();
    expect(events(sb)).toEqual(
      expect.arrayContaining([
        'MigrationTargetPodUnschedulable: Migration target pod for VMI [vms/vm-1] is currently unschedulable.',
        'FailedMigration: Migration target pod was removed during active migration.',
      ]),
    );
    expect(statusOf(vmi(sb, 'vm-1')).nodeName).toBe('node-1');
  }, 20_000);
});

describe('KubeVirt emulation, virt-api admission', () => {
  it('refuses a migration of a VMI that cannot live-migrate, and a second open one (migration-create-admitter.go Admit)', async () => {
    sb = await sandbox(
      kubevirt({
        vmis: [
          ...vms(1, { migrationSeconds: 60 }),
          { name: 'vm-stuck', namespace: 'vms', node: 'node-1', migratable: false },
        ],
      }),
    );
    const path = '/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations';

    const stuck = await api(sb, 'POST', path, migration('vm-stuck'));
    const first = await api(sb, 'POST', path, migration('vm-1'));
    await waitFor(() => phase(sb!.kube.store.get(VMIM, 'vms', 'move-vm-1')));
    const second = await api(sb, 'POST', path, migration('vm-1', 'again'));

    expect(stuck).toMatchObject({ code: 400 });
    expect(stuck.body.message).toBe(
      'admission webhook "migration-create-validator.kubevirt.io" denied the request: Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: DisksNotLiveMigratable',
    );
    expect(first.code).toBe(201);
    expect(second.code).toBe(400);
    expect(second.body.message).toMatch(
      /denied the request: in-flight migration detected\. Active migration job \([-0-9a-f]+\) is currently already in progress for VMI vm-1\.$/,
    );
    expect(migrations(sb).map((m) => m.metadata.name)).toEqual(['move-vm-1']);
  });

  it('answers 429 to the eviction of a migration target pod (pod-eviction-admitter.go admitLauncherPod)', async () => {
    sb = await sandbox(kubevirt({ vmis: vms(1, { migrationSeconds: 60 }) }));
    sb.kube.store.create(VMIM, migration('vm-1'));
    const target = await waitFor(() =>
      sb!.kube.store
        .list('pods', { namespace: 'vms', labelSelector: 'kubevirt.io/migrationJobUID' })
        .find((p) => (p.status as { phase?: string })?.phase === 'Running'),
    );

    const res = await evict(sb, 'vms', target.metadata.name!);

    expect(res.code).toBe(429);
    expect(res.body.message).toBe(
      'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: Eviction request for target Pod',
    );
    expect(
      sb.kube.store.find('pods', 'vms', target.metadata.name!)?.metadata.deletionTimestamp,
    ).toBeUndefined();
  });

  it.each([
    ['v1.4', 429, "Cannot evict pod as it would violate the pod's disruption budget."],
    [
      'v1.5',
      429,
      'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: Evacuation in progress: Eviction triggered evacuation of VMI "vms/vm-1"',
    ],
  ] as const)(
    '%s: a repeated eviction of a marked VMI is answered %i "%s"',
    async (version, code, message) => {
      sb = await sandbox(kubevirt({ version, vmis: vms(1, { migrationSeconds: 60 }) }));
      const pod = sb.kube.store
        .list('pods', { namespace: 'vms', labelSelector: 'vm.kubevirt.io/name=vm-1' })
        .find((p) => (p.spec as { nodeName?: string }).nodeName === 'node-1')!;

      await evict(sb, 'vms', pod.metadata.name!);
      const again = await evict(sb, 'vms', pod.metadata.name!);

      expect(again.code).toBe(code);
      expect(again.body.message).toBe(message);
    },
  );
});

describe('KubeVirt emulation, evacuate/cancel (virt-api rest EvacuateCancelHandler, v1.7+)', () => {
  const cancelPath =
    '/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm-1/evacuate/cancel';

  it('is not in discovery before v1.7, and not served', async () => {
    sb = await sandbox(kubevirt({ version: 'v1.6', vmis: vms(1) }));

    const list = await api(sb, 'GET', '/apis/subresources.kubevirt.io/v1');
    const put = await api(sb, 'PUT', cancelPath, { evacuationNodeName: 'node-1' });

    expect(list.body.resources.map((r: { name: string }) => r.name)).not.toContain(
      'virtualmachineinstances/evacuate/cancel',
    );
    expect(put.code).toBe(404);
  });

  it('v1.9: refuses while the drain taint is on (400), then takes the mark back', async () => {
    sb = await sandbox(kubevirt({ vmis: vms(1, { migrationSeconds: 600 }) }));
    const pod = sb.kube.store
      .list('pods', { namespace: 'vms', labelSelector: 'vm.kubevirt.io/name=vm-1' })
      .find((p) => (p.spec as { nodeName?: string }).nodeName === 'node-1')!;
    await evict(sb, 'vms', pod.metadata.name!);
    taint(sb, 'node-1', 'kubevirt.io/drain');

    const list = await api(sb, 'GET', '/apis/subresources.kubevirt.io/v1');
    const refused = await api(sb, 'PUT', cancelPath, { evacuationNodeName: 'node-1' });
    sb.kube.store.patch('nodes', undefined, 'node-1', 'application/merge-patch+json', {
      spec: { taints: null },
    });
    const done = await api(sb, 'PUT', cancelPath, { evacuationNodeName: 'node-1' });

    expect(list.body.resources.map((r: { name: string }) => r.name)).toContain(
      'virtualmachineinstances/evacuate/cancel',
    );
    expect(refused.code).toBe(400);
    expect(refused.body.message).toBe('Node "node-1" has NodeDrainTaintKey "kubevirt.io/drain:NoSchedule"');
    expect(done.code).toBe(200);
    expect(statusOf(vmi(sb, 'vm-1')).evacuationNodeName).toBeUndefined();
  });
});
