// The sandbox's VirtualMachines take the time they take and answer as KubeVirt does: virt-api's
// stop/start (pkg/virt-api/rest/lifecycle.go) only write the VM; the VM controller
// (pkg/virt-controller/watch/vm/vm.go, syncRunStrategy) stops or starts the VMI per run strategy;
// a stopped VMI stays Running through its termination grace period (scenario time).
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { ANN } from '../../../src/sandbox/controllers/kubevirt/vmi.ts';
import type { KubeObject } from '../../../src/sandbox/kube/types.ts';
import { sandbox, statusOf, VMI, waitFor } from './helpers.ts';

const VM = 'virtualmachines.kubevirt.io';
const NS = 'vms';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function world(): Promise<Sandbox> {
  sb = await sandbox({ kubevirt: { installed: true } });
  sb.kube.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  return sb;
}

/** A VirtualMachine whose VMIs run on node-1 and take `grace` seconds to stop. */
function virtualMachine(s: Sandbox, name: string, runStrategy: string, grace = 30): void {
  s.kube.store.create(VM, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: {
      runStrategy,
      template: {
        metadata: { annotations: { [ANN.node]: 'node-1' } },
        spec: {
          terminationGracePeriodSeconds: grace,
          domain: { resources: { requests: { memory: '1Gi' } } },
        },
      },
    },
  });
}

const instance = (s: Sandbox, name: string): KubeObject | undefined => s.kube.store.find(VMI, NS, name);
const phase = (s: Sandbox, name: string) => {
  const v = instance(s, name);
  return v ? (statusOf(v).phase as string | undefined) : undefined;
};
const strategy = (s: Sandbox, name: string) =>
  (s.kube.store.get(VM, NS, name).spec as { runStrategy?: string }).runStrategy;
const running = (s: Sandbox, name: string) => phase(s, name) === 'Running' || undefined;

async function action(s: Sandbox, name: string, verb: 'stop' | 'start') {
  const res = await fetch(
    `${s.kube.url}/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachines/${name}/${verb}`,
    { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' },
  );
  return { code: res.status, message: ((await res.json()) as { message?: string }).message };
}

/** The guest shuts itself down: its launcher pod goes and the VMI is Succeeded. */
function guestShutsDown(s: Sandbox, name: string): void {
  for (const p of s.kube.store.list('pods', { namespace: NS, labelSelector: `vm.kubevirt.io/name=${name}` }))
    s.kube.store.delete('pods', NS, p.metadata.name ?? '', { gracePeriodSeconds: 0 });
}

describe('sandbox KubeVirt VirtualMachines (lifecycle.go, vm.go)', () => {
  it('a stopped VMI stays Running through its grace period; start answers 409 until it is final', async () => {
    const s = await world();
    virtualMachine(s, 'vm-a', 'Always', 30);
    await waitFor(() => running(s, 'vm-a'));
    const first = instance(s, 'vm-a')!.metadata.uid;

    const stopAt = s.clock.now();
    expect(await action(s, 'vm-a', 'stop')).toMatchObject({ code: 202 });
    expect(strategy(s, 'vm-a')).toBe('Halted');
    await waitFor(() => instance(s, 'vm-a')?.metadata.deletionTimestamp);

    expect(phase(s, 'vm-a')).toBe('Running');
    expect(await action(s, 'vm-a', 'start')).toEqual({
      code: 409,
      message: 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm-a": VM is already running',
    });
    await waitFor(() => !instance(s, 'vm-a'));
    expect(s.clock.now() - stopAt).toBeGreaterThanOrEqual(30_000);

    expect(await action(s, 'vm-a', 'start')).toMatchObject({ code: 202 });
    expect(strategy(s, 'vm-a')).toBe('Always');
    await waitFor(() => running(s, 'vm-a'));
    expect(instance(s, 'vm-a')!.metadata.uid).not.toBe(first);
  });

  it('Always starts a new VMI when the guest shuts down', async () => {
    const s = await world();
    virtualMachine(s, 'vm-a', 'Always');
    await waitFor(() => running(s, 'vm-a'));
    const first = instance(s, 'vm-a')!.metadata.uid;

    guestShutsDown(s, 'vm-a');

    await waitFor(() => running(s, 'vm-a') && instance(s, 'vm-a')!.metadata.uid !== first);
    expect(strategy(s, 'vm-a')).toBe('Always');
  });

  it('Once: never started again once final (the final VMI is kept); stop makes it Halted and start Always', async () => {
    const s = await world();
    virtualMachine(s, 'vm-once', 'Once');
    virtualMachine(s, 'vm-once-2', 'Once');
    await waitFor(() => running(s, 'vm-once') && running(s, 'vm-once-2'));

    guestShutsDown(s, 'vm-once');
    await waitFor(() => phase(s, 'vm-once') === 'Succeeded' || undefined);
    await new Promise((r) => setTimeout(r, 200)); // 10 s of scenario time: nothing restarts it
    expect(phase(s, 'vm-once')).toBe('Succeeded');
    expect(await action(s, 'vm-once', 'start')).toMatchObject({
      code: 409,
      message: expect.stringContaining('Once does not support manual start requests'),
    });

    expect(await action(s, 'vm-once-2', 'stop')).toMatchObject({ code: 202 });
    expect(strategy(s, 'vm-once-2')).toBe('Halted');
    await waitFor(() => !instance(s, 'vm-once-2'));
    expect(await action(s, 'vm-once-2', 'start')).toMatchObject({ code: 202 });
    expect(strategy(s, 'vm-once-2')).toBe('Always');
  });

  it('Manual: stop and start are requests, the strategy stays Manual, and a final VMI is kept', async () => {
    const s = await world();
    virtualMachine(s, 'vm-m', 'Manual');
    await new Promise((r) => setTimeout(r, 100));
    expect(instance(s, 'vm-m')).toBeUndefined(); // Manual starts nothing by itself

    expect(await action(s, 'vm-m', 'start')).toMatchObject({ code: 202 });
    await waitFor(() => running(s, 'vm-m'));
    guestShutsDown(s, 'vm-m');
    await waitFor(() => phase(s, 'vm-m') === 'Succeeded' || undefined);
    await new Promise((r) => setTimeout(r, 200));
    expect(phase(s, 'vm-m')).toBe('Succeeded');

    // start on a final VMI: a stop request for it, then a start
    expect(await action(s, 'vm-m', 'start')).toMatchObject({ code: 202 });
    await waitFor(() => running(s, 'vm-m'));
    expect(await action(s, 'vm-m', 'stop')).toMatchObject({ code: 202 });
    await waitFor(() => !instance(s, 'vm-m'));
    expect(strategy(s, 'vm-m')).toBe('Manual');
    expect(await action(s, 'vm-m', 'stop')).toMatchObject({
      code: 409,
      message: expect.stringContaining('VM is not running'),
    });
  });

  it('RerunOnFailure: a Succeeded VMI is removed and not restarted; stop and start keep the strategy', async () => {
    const s = await world();
    virtualMachine(s, 'vm-r', 'RerunOnFailure');
    await waitFor(() => running(s, 'vm-r'));

    guestShutsDown(s, 'vm-r');
    await waitFor(() => !instance(s, 'vm-r'));
    await new Promise((r) => setTimeout(r, 200));
    expect(instance(s, 'vm-r')).toBeUndefined();

    expect(await action(s, 'vm-r', 'start')).toMatchObject({ code: 202 });
    await waitFor(() => running(s, 'vm-r'));
    expect(await action(s, 'vm-r', 'stop')).toMatchObject({ code: 202 });
    await waitFor(() => !instance(s, 'vm-r'));
    expect(strategy(s, 'vm-r')).toBe('RerunOnFailure');
  });

  it('Halted: stop of a stopped VM is 409 "VM is not running"; a deleted VM takes its VMI with it', async () => {
    const s = await world();
    virtualMachine(s, 'vm-h', 'Halted');
    expect(await action(s, 'vm-h', 'stop')).toMatchObject({
      code: 409,
      message: expect.stringContaining('VM is not running'),
    });
    virtualMachine(s, 'vm-gone', 'Always', 0);
    await waitFor(() => running(s, 'vm-gone'));

    s.kube.store.delete(VM, NS, 'vm-gone');

    await waitFor(() => !instance(s, 'vm-gone'));
    expect(await action(s, 'vm-gone', 'start')).toMatchObject({ code: 404 });
  });
});
