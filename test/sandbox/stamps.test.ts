// Story: a user keeps the sandbox (demo --keep, drainer sandbox) and looks with kubectl. Its scenario
// clock runs fast (scale 50 here), but what kubectl shows carries real time, as a real cluster's
// objects do: an object made a moment ago is "a moment ago", not minutes in the future, and a grace
// period ends at its real moment. The scenario still runs on its fast clock, and the moments it
// weighs against that clock are kept exactly (one real second is 50 scenario seconds).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClients } from '../../src/kube/client.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { readSandboxWorld } from '../../src/sandbox/world.ts';
import type { KubeObject } from '../../src/sandbox/kube/types.ts';
import { until } from '../kube/helpers.ts';

const SCALE = 50;
/** Stamps are whole seconds: a real-time stamp is within this of the real moment it stands for. */
const NEAR_MS = 2000;
const VMIMS = 'virtualmachineinstancemigrations.kubevirt.io';

const expectReal = (iso: string | undefined, what: string, at = Date.now()) => {
  expect(iso, what).toBeDefined();
  expect(Math.abs(Date.parse(iso ?? '') - at), `${what}: ${iso}`).toBeLessThan(NEAR_MS);
};

describe('the kept sandbox stamps real time', () => {
  let sb: Sandbox;
  const api = async (method: string, path: string, body?: unknown): Promise<KubeObject> => {
    const res = await fetch(`${sb.kube.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return (await res.json()) as KubeObject;
  };
  beforeAll(async () => {
    sb = await startSandbox({ scale: SCALE });
    // 300 ms real: 15 s on the scenario clock, so a stamp on that clock would be 15 s ahead
    await new Promise((r) => setTimeout(r, 300));
  });
  afterAll(async () => sb?.close());

  it('seeded and created objects, and a pod the kubelet starts, carry the wall clock', async () => {
    const store = sb.kube.store;
    expectReal(store.list('nodes')[0]?.metadata.creationTimestamp, 'seeded node');
    const made = await api('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'made-now' },
      data: {},
    });
    expectReal(made.metadata.creationTimestamp, 'created ConfigMap');
    const pod = store.list('pods').find((p) => p.metadata.namespace === 'shop');
    const ready = (pod?.status as { conditions?: { type: string; lastTransitionTime?: string }[] })
      .conditions;
    expectReal(ready?.find((c) => c.type === 'Ready')?.lastTransitionTime, 'pod Ready condition');
  });

  it("kubectl's AGE of an object made a second ago reads 1s (the server prints it: kubectl shows its Table)", async () => {
    // a second later in real time, 50 s later on the scenario clock
    await new Promise((r) => setTimeout(r, 1100));
    const res = await fetch(`${sb.kube.url}/api/v1/namespaces/default/configmaps`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    const table = (await res.json()) as {
      columnDefinitions: { name: string }[];
      rows: { cells: string[] }[];
    };
    const age = table.columnDefinitions.findIndex((c) => c.name === 'Age');
    const row = table.rows.find((r) => r.cells[0] === 'made-now');
    expect(row?.cells[age]).toMatch(/^[12]s$/);
  });

  it('a grace period ends at its real moment, and its scenario moment is kept exactly', async () => {
    const [pod] = sb.kube.store.list('pods', { namespace: 'shop' });
    const before = sb.clock.now();
    const deleted = await api('DELETE', `/api/v1/namespaces/shop/pods/${pod!.metadata.name}`, {
      gracePeriodSeconds: 30,
    });
    const after = sb.clock.now();
    // 30 scenario seconds are 0.6 real seconds
    expectReal(deleted.metadata.deletionTimestamp, 'deletionTimestamp', Date.now() + 30_000 / SCALE);
    const end = sb.kube.store.stamps.metaMoment(deleted, 'deletionTimestamp');
    expect(end).toBeGreaterThanOrEqual(before + 30_000);
    expect(end).toBeLessThanOrEqual(after + 30_000);
  });

  it("a migration's end and its Events carry the wall clock", async () => {
    // when the migration's end is written, on the scenario clock (the store tells its watchers at once)
    let endedAt: number | undefined;
    const off = sb.kube.store.subscribe(VMIMS, (_type, m) => {
      if ((m.status as { phase?: string } | undefined)?.phase === 'Succeeded') endedAt ??= sb.clock.now();
    });
    await api('POST', `/apis/kubevirt.io/v1/namespaces/vms/virtualmachineinstancemigrations`, {
      metadata: { name: 'move-web-1' },
      spec: { vmiName: 'vm-web-1' },
    });
    const done = () => sb.kube.store.find(VMIMS, 'vms', 'move-web-1');
    await until(
      () => (done()?.status as { phase?: string })?.phase === 'Succeeded',
      'the migration succeeded',
    );
    const state = (done()?.status as { migrationState?: { startTimestamp?: string; endTimestamp?: string } })
      .migrationState;
    expectReal(state?.startTimestamp, 'migration start');
    expectReal(state?.endTimestamp, 'migration end');
    const events = sb.kube.store
      .list('events', { namespace: 'vms' })
      .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === 'move-web-1');
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expectReal((e as { lastTimestamp?: string }).lastTimestamp, 'Event');
    off();

    // the promises are judged on the scenario clock, where a whole real second is 50 s: the end and
    // an Event about a node are put on it to the millisecond, not to the nearest 50 s
    const before = sb.clock.now();
    await api('POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'node-1.reported' },
      involvedObject: { kind: 'Node', name: 'node-1' },
      reason: 'EvacuationFailed',
      type: 'Warning',
      message: 'told now',
    });
    const after = sb.clock.now();
    const world = await readSandboxWorld(sb, createKubeClients({ kubeconfigYaml: sb.kube.kubeconfig() }), {
      namespace: 'drainer',
    });
    const told = world.events.find((e) => e.message === 'told now');
    expect(told?.at).toBeGreaterThanOrEqual(before);
    expect(told?.at).toBeLessThanOrEqual(after);
    const move = world.vmiMoves?.find((m) => m.vmi === 'vm-web-1');
    // within 10 scenario seconds (0.2 s real: a loaded machine's delay between the write and its watcher),
    // far inside the 50 s a whole-second stamp would be off by
    expect(Math.abs((move?.endedAt ?? 0) - (endedAt ?? NaN))).toBeLessThan(10_000);
  });

  it('while the scenario clock runs fast', () => {
    expect(sb.clock.now() - Date.now()).toBeGreaterThan(10_000);
  });
});
