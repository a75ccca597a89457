// Story: a cluster without KubeVirt. The plugin has nothing to do and says so, unless the operator
// said KubeVirt is required.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { kubevirtSchema } from '../../../src/config/schema.ts';
import { isDrainerError } from '../../../src/errors.ts';
import { createLogger } from '../../../src/observability/logger.ts';
import { createKubevirtPlugin } from '../../../src/plugins/kubevirt/index.ts';
import { context, vm, worldPerTest } from './harness.ts';

const world = worldPerTest();

describe('KubeVirt plugin without KubeVirt', () => {
  it('succeeds with nothing to do when the KubeVirt CRDs are not installed', async () => {
    const w = await world({ installed: false });
    const plugin = w.plugin();

    const plan = await plugin.plan({ name: 'node-1' }, new AbortController().signal);
    const outcome = await plugin.evacuate({ name: 'node-1' }, context());

    expect(plan.workloads).toEqual([]);
    expect(outcome).toMatchObject({ succeeded: true, workloads: [], message: 'KubeVirt not installed' });
    // the evacuate right after its plan uses the plan's read
    const reads = () => w?.sb.kube.requestLog.map((r) => `${r.method} ${r.path.split('?')[0]} ${r.status}`);
    expect(reads()).toEqual(['GET /apis/kubevirt.io/v1/kubevirts 404']);
    // an evacuate with no plan before it (a resumed one) reads for itself
    await plugin.evacuate({ name: 'node-1' }, context());
    expect(reads()).toEqual([
      'GET /apis/kubevirt.io/v1/kubevirts 404',
      'GET /apis/kubevirt.io/v1/kubevirts 404',
    ]);
  });

  it('treats CRDs without a KubeVirt CR as not installed', async () => {
    const w = await world({});
    w.sb.kube.store.delete('kubevirts.kubevirt.io', 'kubevirt', 'kubevirt');

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, context());

    expect(outcome).toMatchObject({ succeeded: true, message: 'KubeVirt not installed' });
  });

  it('fails when kubevirt.required is set', async () => {
    const w = await world({ installed: false });

    const failure = await w
      .plugin({ required: true })
      .evacuate({ name: 'node-1' }, context())
      .catch((e: unknown) => e);

    expect(isDrainerError(failure) && failure.code).toBe('UNSUPPORTED');
    expect((failure as Error).message).toMatch(/kubevirt\.required/);
  });

  it('KubeVirt installed after the agent started: the next plan sees its VMIs, and one line says so', async () => {
    const w = await world({ vmis: [vm('vm-a')] });
    const cr = w.sb.kube.store.get('kubevirts.kubevirt.io', 'kubevirt', 'kubevirt');
    w.sb.kube.store.delete('kubevirts.kubevirt.io', 'kubevirt', 'kubevirt');
    const lines: string[] = [];
    const log = createLogger({
      destination: new Writable({
        write(chunk: Buffer, _e, cb) {
          lines.push((JSON.parse(chunk.toString()) as { msg: string }).msg);
          cb();
        },
      }),
    });
    const plugin = createKubevirtPlugin({ kubevirt: kubevirtSchema.parse({}), kube: w.k, log });
    const signal = new AbortController().signal;

    expect((await plugin.plan({ name: 'node-1' }, signal)).workloads).toEqual([]);
    expect((await plugin.plan({ name: 'node-1' }, signal)).workloads).toEqual([]);
    w.sb.kube.store.create('kubevirts.kubevirt.io', {
      ...cr,
      metadata: { name: 'kubevirt', namespace: 'kubevirt' },
    });
    const plan = await plugin.plan({ name: 'node-1' }, signal);

    expect(plan.workloads.map((x) => x.name)).toEqual(['vms/vm-a']);
    expect(lines).toEqual([
      'KubeVirt not installed: the kubevirt plugin has nothing to do until it is (looked for at each plan)',
      'KubeVirt is installed now: the kubevirt plugin moves VMIs from this plan on',
    ]);
  });
});
