// The KubeVirt capacity verdict: launcher requests against the other nodes' room, taints and
// nodeSelector, against the sandbox API server; tolerations and quantities from tables.
import { describe, expect, it } from 'vitest';
import { kubevirtCapacity, type NodeView, type PodSpecView } from '../../../src/plugins/kubevirt/capacity.ts';
import { parseQuantity } from '../../../src/plugins/kubevirt/quantity.ts';
import { vm, worldPerTest, type World } from './harness.ts';

const world = worldPerTest();

const plan = async (wld: World) =>
  (await wld.plugin().plan({ name: 'node-1' }, new AbortController().signal, { capacity: true })).capacity;

/** Launchers are created by the simulation once the clock runs: wait for them. */
async function launchersUp(wld: World, n: number) {
  for (let i = 0; i < 200; i++) {
    const pods = wld.sb.kube.store
      .list('pods')
      .filter((p) => p.metadata.labels?.['kubevirt.io'] === 'virt-launcher');
    if (pods.length >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('launcher pods did not appear');
}

describe('kubevirt capacity (sandbox)', () => {
  it('fits on the other nodes, and says what it does not check', async () => {
    const w = await world({ vmis: [vm('vm-a'), vm('vm-b')] });
    await launchersUp(w, 2);
    expect(await plan(w)).toEqual({
      status: 'fits',
      message: 'kubevirt: all 2 VMIs fit on 2 other hosts (affinity and topology spread not checked)',
    });
  });

  it('a nodeSelector leaves one node: the second big VMI does not fit', async () => {
    const w = await world({
      vmis: [
        vm('big-1', { memory: '100Gi', nodeSelector: { gpu: 'yes' } }),
        vm('big-2', { memory: '100Gi', nodeSelector: { gpu: 'yes' } }),
      ],
    });
    w.sb.kube.store.patch('nodes', undefined, 'node-3', 'application/merge-patch+json', {
      metadata: { labels: { gpu: 'yes' } },
    });
    await launchersUp(w, 2);
    const v = await plan(w);
    expect(v?.status).toBe('short');
    expect(v?.message).toMatch(
      /^kubevirt: 1 of 2 VMIs does not fit: vms\/big-\d \(0\.1 CPU, 100\.2 GiB memory, 1 pod slot\): the largest room on one other host is [\d.]+ GiB memory/,
    );
  });
});

const node = (name: string, extra: Partial<NodeView> = {}): NodeView => ({
  metadata: { name, labels: {} },
  spec: {},
  status: {
    allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
  ...extra,
});
const launcher = (extra: PodSpecView['spec'] = {}): PodSpecView => ({
  metadata: { name: 'virt-launcher-x', namespace: 'vms' },
  spec: {
    nodeName: 'node-1',
    containers: [{ resources: { requests: { cpu: '500m', memory: '4Gi' } } }],
    ...extra,
  },
});

describe('kubevirt capacity (tables)', () => {
  it.each([
    [
      'a NoSchedule taint the launcher does not tolerate',
      { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
      {},
      'short',
    ],
    [
      'the same taint tolerated (Equal)',
      { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
      { tolerations: [{ key: 'dedicated', operator: 'Equal' as const, value: 'db', effect: 'NoSchedule' }] },
      'fits',
    ],
    [
      'tolerated by Exists without a key',
      { taints: [{ key: 'any', effect: 'NoExecute' }] },
      { tolerations: [{ operator: 'Exists' as const }] },
      'fits',
    ],
    [
      'a PreferNoSchedule taint does not exclude',
      { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] },
      {},
      'fits',
    ],
    ['an unschedulable node is no target', { unschedulable: true }, {}, 'short'],
  ])('%s', (_name, spec, podSpec, status) => {
    const v = kubevirtCapacity({
      node: 'node-1',
      launchers: [{ vmi: 'vms/vm-x', pod: launcher(podSpec) }],
      nodes: [node('node-1'), node('node-2', { spec })],
      pods: [],
    });
    expect(v.status).toBe(status);
  });

  it('counts the requests of the pods already bound to a node, not finished ones', () => {
    const busy = (phase: string): PodSpecView => ({
      metadata: { name: `p-${phase}` },
      spec: { nodeName: 'node-2', containers: [{ resources: { requests: { memory: '14Gi' } } }] },
      status: { phase },
    });
    const verdict = (phase: string) =>
      kubevirtCapacity({
        node: 'node-1',
        launchers: [{ vmi: 'vms/vm-x', pod: launcher() }],
        nodes: [node('node-1'), node('node-2')],
        pods: [busy(phase)],
      }).status;
    expect(verdict('Running')).toBe('short');
    expect(verdict('Succeeded')).toBe('fits');
  });

  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['128974848', 128974848],
    ['129e6', 129e6],
    ['123Mi', 123 * 2 ** 20],
    ['1G', 1e9],
  ])('parses the quantity %s', (q, n) => expect(parseQuantity(q)).toBe(n));
});
