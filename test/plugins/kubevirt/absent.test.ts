// Story: a cluster without KubeVirt. The plugin has nothing to do and says so, unless the operator
// said KubeVirt is required.
import { describe, expect, it } from 'vitest';
import { isDrainerError } from '../../../src/errors.ts';
import { context, worldPerTest } from './harness.ts';

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
});
