// Contract: the fields drainer reads and the sandbox's KubeVirt writes exist in KubeVirt's CRD
// schemas (the excerpt kubevirt-crds.json). The emulation's objects after a busy evacuation (moved,
// failed and queued migrations, a marked External VMI) validate against it, and every field the
// plugin reads resolves in it: a renamed field cannot pass silently.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { PLUGIN_READS } from './plugin-reads.ts';
import { problems, schemaAt, type Excerpt } from './schema-check.ts';

const excerpt = JSON.parse(readFileSync(new URL('./kubevirt-crds.json', import.meta.url), 'utf8')) as Excerpt;
const VMI = 'virtualmachineinstances.kubevirt.io';
const VMIM = 'virtualmachineinstancemigrations.kubevirt.io';

const missing = (doc: Excerpt) =>
  Object.entries(PLUGIN_READS).flatMap(([kind, paths]) =>
    paths.filter((p) => !schemaAt(doc, doc[kind] as object, p)).map((p) => `${kind} ${p}`),
  );

describe('KubeVirt CRD excerpt', () => {
  it('has every field the plugin reads', () => {
    expect(missing(excerpt)).toEqual([]);
  });

  it('fails the check when a field the plugin reads is renamed in the excerpt', () => {
    const renamed = structuredClone(excerpt) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const status = renamed.VirtualMachineInstance.properties.status.properties;
    status.evacuationNode = status.evacuationNodeName;
    delete status.evacuationNodeName;
    renamed.MigrationState.properties.target = renamed.MigrationState.properties.targetNode;
    delete renamed.MigrationState.properties.targetNode;

    expect(missing(renamed as Excerpt)).toEqual([
      'VirtualMachineInstance status.evacuationNodeName',
      'VirtualMachineInstance status.migrationState.targetNode',
      'VirtualMachineInstanceMigration status.migrationState.targetNode',
    ]);
  });
});

describe("the sandbox's KubeVirt objects validate against the excerpt", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({
      scale: 100,
      scenario: {
        nodes: [{ name: 'node-1' }, { name: 'node-2' }, { name: 'node-3' }],
        kubevirt: {
          installed: true,
          evictionStrategy: 'LiveMigrate',
          migrationSeconds: 4,
          vmis: [
            { name: 'vm-a', namespace: 'vms', node: 'node-1', memory: '4Gi' },
            { name: 'vm-b', namespace: 'vms', node: 'node-1', failFirstAttempts: 1 },
            { name: 'vm-c', namespace: 'vms', node: 'node-1', migrationSeconds: 600 },
            { name: 'vm-ext', namespace: 'vms', node: 'node-2', evictionStrategy: 'External' },
            { name: 'vm-stuck', namespace: 'vms', node: 'node-2', migratable: false },
          ],
        },
      },
    });
    const { store } = sb.kube;
    const pod = store
      .list('pods', { namespace: 'vms', labelSelector: 'vm.kubevirt.io/name=vm-ext' })
      .find((p) => (p.spec as { nodeName?: string }).nodeName === 'node-2');
    await fetch(`${sb.kube.url}/api/v1/namespaces/vms/pods/${pod?.metadata.name}/eviction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: pod?.metadata.name },
      }),
    });
    const n = store.get('nodes', undefined, 'node-1');
    n.spec = { ...(n.spec as object), taints: [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }] };
    store.update('nodes', n);
    const phases = () => store.list(VMIM).map((m) => (m.status as { phase?: string } | undefined)?.phase);
    const end = Date.now() + 10_000;
    // moved, failed once, and one still running: every kind of state written
    while (!(phases().includes('Failed') && phases().filter((p) => p === 'Succeeded').length >= 2)) {
      if (Date.now() > end) throw new Error(`timed out: ${phases().join(',')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }, 20_000);
  afterAll(async () => sb?.close());

  it('VirtualMachineInstances', () => {
    const vmis = sb.kube.store.list(VMI);
    expect(vmis.map((v) => v.metadata.name).sort()).toEqual(['vm-a', 'vm-b', 'vm-c', 'vm-ext', 'vm-stuck']);
    expect(vmis.some((v) => (v.status as { evacuationNodeName?: string }).evacuationNodeName)).toBe(true);
    expect(
      vmis.flatMap((v) => problems(excerpt, excerpt.VirtualMachineInstance as object, v, v.metadata.name)),
    ).toEqual([]);
  });

  it('VirtualMachineInstanceMigrations', () => {
    const vmims = sb.kube.store.list(VMIM);
    expect(vmims.length).toBeGreaterThanOrEqual(4);
    expect(
      vmims.flatMap((m) =>
        problems(excerpt, excerpt.VirtualMachineInstanceMigration as object, m, m.metadata.name),
      ),
    ).toEqual([]);
  });
});
