// drainer against KubeVirt's own control plane: the real virt-api (its webhooks: the eviction admitter, the
// migration admitter) and the real virt-controller (its evacuation, migration and disruption-budget controllers)
// on the real cluster decide; the node side (virt-handler, and the kubelet of a second Node) is emulated by
// support/kubevirt/node-side.ts. NO GUEST RUNS AND NO GUEST MEMORY IS COPIED: a migration is virt-handler's
// status handshake, so these cases prove drainer's contract with KubeVirt's control plane, not a VM's move.
// Only with DRAINER_REAL_KUBEVIRT=1 (docs/real-cluster-tests.md, "KubeVirt"); they run without OpenStack too.
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { compare, loadExcerpt, readRealSchemas, verdict } from '../contract/crd-contract.ts';
import { PLUGIN_READS } from '../contract/plugin-reads.ts';
import { figure, seconds } from './support/context.ts';
import type { Obj } from './support/kubectl.ts';
import { NAMESPACE } from './support/overlay.ts';
import {
  kubevirtWanted,
  until,
  useKubeVirt,
  VM_NAMESPACE,
  type KubeVirtWorld,
} from './support/kubevirt/world.ts';

const DRAIN_TAINT = 'kubevirt.io/drain';
const world = kubevirtWanted() ? useKubeVirt() : undefined;
const w = (): KubeVirtWorld => world!();

/** drainer's Events on the node since `t0`, as "Reason: message". */
async function drainerEvents(x: KubeVirtWorld, t0: number): Promise<string[]> {
  const list = await x.k.get([
    'events',
    '-A',
    '--field-selector',
    `involvedObject.kind=Node,involvedObject.name=${x.env.node}`,
  ]);
  return ((list?.items ?? []) as Obj[])
    .filter((e) => Date.parse(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp) >= t0 - 1000)
    .filter((e) => (e.source?.component ?? e.reportingComponent ?? '').includes('drainer'))
    .map((e) => `${e.reason}: ${e.message}`);
}

const drainTaint = async (x: KubeVirtWorld) =>
  ((await x.cluster.node()).spec.taints ?? []).find((t: Obj) => t.key === DRAIN_TAINT);

/** The VMIs running on `node` (a stopped one keeps its nodeName, but has left). */
const onNode = async (x: KubeVirtWorld, node: string) =>
  (await x.vmis.list())
    .filter((v) => v.status?.nodeName === node && !['Succeeded', 'Failed'].includes(v.status?.phase))
    .map((v) => v.metadata.name as string);

describe.skipIf(!world)('KubeVirt control plane', () => {
  it('virt-api and virt-controller run against the cluster; the CRDs have every field drainer reads', async (ctx) => {
    const x = w();
    expect(x.controlPlane.apiVersion).toMatch(/^v1\.(5|6|7|8|9)\./);
    expect(x.controlPlane.controllerLeader).not.toBe('');
    figure(ctx, 'KubeVirt control plane version', `${x.controlPlane.apiVersion} (virt-api, virt-controller)`);
    figure(
      ctx,
      'KubeVirt node side',
      'emulated (support/kubevirt/node-side.ts): no guest runs, no memory is copied',
    );

    const excerpt = loadExcerpt();
    const findings = compare(excerpt, readRealSchemas(x.env.kubectl, x.env.kubeconfig));
    const read = Object.entries(PLUGIN_READS).flatMap(([kind, paths]) => paths.map((p) => `${kind} ${p}`));
    expect(findings.filter((f) => read.includes(`${f.kind} ${f.path}`))).toEqual([]);
    figure(ctx, 'KubeVirt CRD contract (test/contract/crd-contract.ts)', verdict(excerpt, findings));
  });
});

describe.skipIf(!world)('KubeVirt: cordon of a node with LiveMigrate VMIs', () => {
  it("adds the drain taint, KubeVirt's evacuation controller migrates each VMI, drainer reports it, uncordon restores", async (ctx) => {
    const x = w();
    await x.cluster.waitGateHeld();
    await x.vmis.start({ 'vm-a': { strategy: 'LiveMigrate' }, 'vm-b': { strategy: 'LiveMigrate' } });

    const t0 = Date.now();
    await x.cluster.cordon();
    await until(x, 'the drain taint on the node', async () => (await drainTaint(x)) ?? undefined);
    expect(await drainTaint(x)).toMatchObject({ key: DRAIN_TAINT, effect: 'NoSchedule' });
    expect(((await x.cluster.record()) as Obj)?.plugins?.kubevirt).toMatchObject({
      taint: { key: DRAIN_TAINT, effect: 'NoSchedule' },
    });
    await x.cluster.waitPhase('Evacuated');
    figure(ctx, 'cordon to Evacuated, 2 VMIs', `${seconds(Date.now() - t0)} s`);

    // KubeVirt's own evacuation controller made the migrations, one per VMI
    const vmims = await x.vmis.migrations();
    expect(vmims.map((m) => m.spec.vmiName).sort()).toEqual(['vm-a', 'vm-b']);
    for (const m of vmims) {
      expect(m.metadata.name).toMatch(/^kubevirt-evacuation-/);
      expect(m.metadata.annotations?.['kubevirt.io/evacuationMigration']).toBe(x.env.node);
      expect(m.status.phase).toBe('Succeeded');
    }
    for (const v of await x.vmis.list()) {
      expect(v.status.nodeName).toBe(x.kv.emulatedNode);
      expect(v.metadata.labels['kubevirt.io/nodeName']).toBe(x.kv.emulatedNode);
      expect(v.status.migrationState).toMatchObject({ completed: true, targetNode: x.kv.emulatedNode });
      expect(v.status.migrationState.failed).toBeFalsy();
    }
    // drainer's report: each VMI started and moved, the plugin's outcome
    const events = await drainerEvents(x, t0);
    for (const name of ['vm-a', 'vm-b']) {
      expect(events).toContainEqual(
        expect.stringMatching(new RegExp(`^MigrationStarted: kubevirt: ${VM_NAMESPACE}/${name} `)),
      );
      expect(events).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^MigrationSucceeded: kubevirt: ${VM_NAMESPACE}/${name} .*moved to ${x.kv.emulatedNode}`,
          ),
        ),
      );
    }
    expect((await x.cluster.record())?.outcomes).toContainEqual(
      expect.objectContaining({ plugin: 'kubevirt', succeeded: true, moved: 2, failed: 0 }),
    );

    const t1 = Date.now();
    await x.cluster.uncordon();
    await x.cluster.waitPhase(undefined);
    figure(ctx, 'uncordon to in service', `${seconds(Date.now() - t1)} s`);
    expect(await drainTaint(x)).toBeUndefined();
    await x.cluster.waitGateHeld();
  });
});

describe.skipIf(!world)('KubeVirt: kubectl drain', () => {
  it("gets the eviction admitter's 429 for each launcher pod, and returns only after the VMIs left", async (ctx) => {
    const x = w();
    await x.cluster.waitGateHeld();
    await x.vmis.start({ 'vm-c': { strategy: 'LiveMigrate' }, 'vm-d': { strategy: 'LiveMigrate' } });
    const launchers = (await x.vmis.launchers()).map((p) => p.metadata.name as string);
    expect(launchers).toHaveLength(2);

    const drain = x.cluster.drain();
    let lastLeftAt = 0;
    const watch = (async () => {
      while (!drain.exited()) {
        if ((await onNode(x, x.env.node)).length > 0) lastLeftAt = Date.now();
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const done = await drain.done;
    await watch;
    const stillThere = await onNode(x, x.env.node);

    expect(done.code, done.stderr).toBe(0);
    expect(stillThere, 'VMIs still on the node when kubectl drain returned').toEqual([]);
    expect(done.endedAt).toBeGreaterThanOrEqual(lastLeftAt);
    // the real eviction admitter refused each launcher pod with 429 while KubeVirt moved its VMI.
    // KubeVirt registers it twice at one path (launcher pods, hotplug pods), told apart only by
    // matchConditions, which v1.26 drops: either name may answer first for a launcher pod
    const out = done.stderr + done.stdout;
    for (const pod of launchers)
      expect(out).toMatch(
        new RegExp(
          `evicting pods/"${pod}" -n "${VM_NAMESPACE}"[^\\n]*admission webhook "(virt-launcher|hotplug-pod)-eviction-interceptor\\.kubevirt\\.io" denied the request: (Evacuation in progress: )?Eviction triggered evacuation of VMI`,
        ),
      );
    expect(await x.cluster.phase()).toBe('Evacuated');
    figure(ctx, 'drain took, 2 VMIs', `${seconds(done.endedAt - drain.startedAt)} s`);
    figure(ctx, 'drain returned after the last VMI left by', `${seconds(done.endedAt - lastLeftAt)} s`);

    await x.cluster.backInService();
  });
});

describe.skipIf(!world)('KubeVirt: a LiveMigrate VMI that cannot live-migrate', () => {
  it('is refused before any change: no drain taint, no migration, the VMI where it was', async () => {
    const x = w();
    await x.cluster.waitGateHeld();
    await x.vmis.start({ 'vm-stuck': { strategy: 'LiveMigrate', migratable: false } });

    await x.cluster.cordon();
    await x.cluster.waitPhase('Failed');

    const rec = await x.cluster.record();
    expect(rec?.failureReason).toBe('EvacuationBlocked');
    expect(rec?.lastError).toMatch(/^refused before any change: /);
    expect(rec?.lastError).toContain(`kubevirt: ${VM_NAMESPACE}/vm-stuck`);
    expect(rec?.lastError).toContain('DisksNotLiveMigratable');
    expect(await drainTaint(x)).toBeUndefined();
    expect(await x.vmis.migrations()).toEqual([]);
    expect((await x.vmis.get('vm-stuck')).status).toMatchObject({ phase: 'Running', nodeName: x.env.node });
    expect((await x.vmis.launchers()).filter((p) => !p.metadata.deletionTimestamp)).toHaveLength(1);
  });
});

describe.skipIf(!world)('KubeVirt: LiveMigrateIfPossible and External (kubevirt.external: migrate)', () => {
  it('KubeVirt migrates the migratable LiveMigrateIfPossible VMI, the pod drain stops the other, drainer migrates the External one', async () => {
    const x = w();
    // drainer as the External VMIs' controller: not the default (mark), so this cluster says so
    await setKubevirtConfig(x, { external: 'migrate' });
    try {
      await x.cluster.waitGateHeld();
      await x.vmis.start({
        'vm-ifp': { strategy: 'LiveMigrateIfPossible' },
        'vm-ifp-stuck': { strategy: 'LiveMigrateIfPossible', migratable: false },
        'vm-ext': { strategy: 'External' },
      });

      await x.cluster.cordon();
      await x.cluster.waitPhase('Evacuated');

      const vmims = await x.vmis.migrations();
      const of = (vmi: string) => vmims.filter((m) => m.spec.vmiName === vmi);
      // KubeVirt's evacuation controller: only the migratable LiveMigrateIfPossible VMI, never the External one
      expect(of('vm-ifp').map((m) => m.metadata.name)).toEqual([
        expect.stringMatching(/^kubevirt-evacuation-/),
      ]);
      expect(of('vm-ifp-stuck')).toEqual([]);
      // drainer, as the External VMI's controller: its own migration, after KubeVirt marked the VMI
      expect(of('vm-ext')).toEqual([
        expect.objectContaining({
          metadata: expect.objectContaining({
            name: expect.stringMatching(/^drainer-evacuation-/),
            labels: expect.objectContaining({ 'drainer.dev/node': x.env.node }),
          }),
          status: expect.objectContaining({ phase: 'Succeeded' }),
        }),
      ]);
      expect((await x.vmis.get('vm-ifp')).status.nodeName).toBe(x.kv.emulatedNode);
      expect((await x.vmis.get('vm-ext')).status.nodeName).toBe(x.kv.emulatedNode);
      // the pod drain evicted the launcher pod of the one that cannot migrate: KubeVirt allowed it, the VMI stopped
      const stuck = await x.vmis.get('vm-ifp-stuck');
      expect(stuck === undefined || ['Succeeded', 'Failed'].includes(stuck.status?.phase)).toBe(true);
      expect(await onNode(x, x.env.node)).toEqual([]);

      await x.cluster.backInService();
    } finally {
      await setKubevirtConfig(x, { external: undefined });
    }
  });
});

describe.skipIf(!world)('KubeVirt: External with kubevirt.external: mark (the default)', () => {
  it('evicts the launcher pod once, KubeVirt marks the VMI, nobody migrates it, and drainer waits until its own controller took it off the node', async () => {
    const x = w();
    // the default: no external key in the config (a case that failed half way may have left one)
    await setKubevirtConfig(x, { external: undefined });
    await x.cluster.waitGateHeld();
    await x.vmis.start({ 'vm-ext-mark': { strategy: 'External' } });

    await x.cluster.cordon();
    // KubeVirt's eviction admitter marked it for the controller that owns it; drainer counts it as not moved
    await until(x, 'vm-ext-mark marked for evacuation', async () =>
      (await x.vmis.get('vm-ext-mark')).status?.evacuationNodeName === x.env.node ? true : undefined,
    );
    await until(x, 'drainer counting vm-ext-mark as still to move', async () => {
      const progress = ((await x.cluster.record()) as Obj)?.progress?.kubevirt;
      return progress?.total === 1 && progress.moved === 0 ? true : undefined;
    });
    // and waits for that controller: nothing moves it, the node stays Evacuating with the VMI on it
    for (let look = 0; look < 10; look++) {
      expect(await x.cluster.phase()).toBe('Evacuating');
      expect(await x.vmis.migrations()).toEqual([]);
      expect(await onNode(x, x.env.node)).toEqual(['vm-ext-mark']);
      // its launcher pod stays: KubeVirt refused the eviction (it marked instead) and drainer's pod drain skips it
      expect((await x.vmis.launchers()).filter((p) => !p.metadata.deletionTimestamp)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 1_000));
    }

    // the VMI's own controller takes it off the node as Cluster API's KubeVirt provider does: it deletes it
    await x.k.ok(['delete', 'vmi', '-n', VM_NAMESPACE, 'vm-ext-mark', '--wait=false']);
    await x.cluster.waitPhase('Evacuated');
    const kubevirt = ((await x.cluster.record()) as Obj).outcomes?.find((o: Obj) => o.plugin === 'kubevirt');
    expect(kubevirt).toMatchObject({ succeeded: true, moved: 0, failed: 0 });
    expect(await x.vmis.migrations()).toEqual([]);

    await x.cluster.backInService();
  });
});

describe.skipIf(!world)('KubeVirt: a migration KubeVirt fails', () => {
  it("is reported by drainer with KubeVirt's own failure reason", async () => {
    const x = w();
    // a short per-VMI deadline, so the evacuation ends (failed) while KubeVirt still retries
    await setKubevirtConfig(x, { migrationTimeout: 30 });
    try {
      await x.cluster.waitGateHeld();
      const reason = 'emulated node side: the target refused the connection';
      await x.vmis.start({ 'vm-fail': { strategy: 'LiveMigrate', failWith: reason } });

      const t0 = Date.now();
      await x.cluster.cordon();
      const failed = await until(x, 'a Failed migration of vm-fail', async () =>
        (await x.vmis.migrations()).find((m) => m.status?.phase === 'Failed'),
      );
      // KubeVirt's migration controller copied the node's reason into the final VMIM
      expect(failed.status.migrationState).toMatchObject({ failed: true, failureReason: reason });
      await x.cluster.waitPhase('Failed');

      // drainer names the VMI, the failed migration and KubeVirt's reason
      const event = (await drainerEvents(x, t0)).find((e) =>
        e.startsWith(`MigrationFailed: kubevirt: ${VM_NAMESPACE}/vm-fail `),
      );
      expect(event).toContain(`(${reason})`);
      expect(event).toMatch(/migration kubevirt-evacuation-\w+ /);
      expect((await x.cluster.record())?.lastError).toContain(`${VM_NAMESPACE}/vm-fail`);
      // KubeVirt retries its evacuation itself: more than one migration, the VMI still where it was
      expect((await x.vmis.migrations()).length).toBeGreaterThan(1);
      expect((await x.vmis.get('vm-fail')).status.nodeName).toBe(x.env.node);
    } finally {
      await x.cluster.uncordon();
      await x.cluster.waitPhase(undefined);
      await setKubevirtConfig(x, { migrationTimeout: undefined });
    }
  });
});

describe.skipIf(!world)('KubeVirt: evacuate/cancel', () => {
  it('is listed in subresources.kubevirt.io/v1 discovery only where the version serves it (v1.7+)', async (ctx) => {
    const x = w();
    const resources = ((await x.k.raw('/apis/subresources.kubevirt.io/v1')).resources as Obj[]).map(
      (r) => r.name as string,
    );
    const minor = Number(/^v1\.(\d+)\./.exec(x.controlPlane.apiVersion)?.[1]);
    expect(resources).toContain('virtualmachines/stop');
    expect(resources.includes('virtualmachineinstances/evacuate/cancel')).toBe(minor >= 7);
    figure(
      ctx,
      'evacuate/cancel served',
      resources.includes('virtualmachineinstances/evacuate/cancel')
        ? 'yes'
        : `no (${x.controlPlane.apiVersion})`,
    );
  });
});

/** Sets keys of drainer's `kubevirt` config (undefined removes one) and waits for a restarted agent to read it. */
async function setKubevirtConfig(x: KubeVirtWorld, keys: Record<string, unknown>): Promise<void> {
  // the ConfigMap the DaemonSet mounts (drainer-config-<hash>, kustomize's generator), edited in place and
  // rolled by hand: quicker here than a new overlay
  const ds = await x.k.get(['daemonset', '-n', NAMESPACE, 'drainer']);
  const name = (ds.spec.template.spec.volumes as { name: string; configMap?: { name: string } }[]).find(
    (v) => v.name === 'config',
  )?.configMap?.name;
  if (!name) throw new Error('the drainer DaemonSet mounts no config ConfigMap');
  const cm = await x.k.get(['configmap', '-n', NAMESPACE, name]);
  const config = yaml.load(cm.data['config.yaml']) as { kubevirt?: Record<string, unknown> };
  const kubevirt: Record<string, unknown> = { ...config.kubevirt };
  for (const [key, value] of Object.entries(keys))
    if (value === undefined) delete kubevirt[key];
    else kubevirt[key] = value;
  if (JSON.stringify(kubevirt) === JSON.stringify(config.kubevirt ?? {})) return;
  config.kubevirt = kubevirt;
  await x.k.ok([
    'patch',
    'configmap',
    '-n',
    NAMESPACE,
    name,
    '--type=merge',
    '-p',
    JSON.stringify({ data: { 'config.yaml': yaml.dump(config) } }),
  ]);
  await x.k.ok(['rollout', 'restart', 'ds/drainer', '-n', NAMESPACE]);
  await x.k.ok(['rollout', 'status', 'ds/drainer', '-n', NAMESPACE, '--timeout=300s'], {
    timeoutMs: 320_000,
  });
  await until(x, 'the restarted agent Ready', async () => await x.cluster.readyAgent());
}
