// Story: a user keeps the sandbox (demo --keep, drainer sandbox) and looks with kubectl. Its scenario
// clock runs fast (scale 50 here), but what kubectl shows carries real time: an object made a
// moment ago is "a moment ago", not minutes in the future. The scenario still runs on its fast clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import type { KubeObject } from '../../src/sandbox/kube/types.ts';

const SCALE = 50;
/** Stamps are whole seconds: a real-time stamp is within this of the wall clock. */
const NEAR_MS = 2000;

const expectReal = (iso: string | undefined, what: string) => {
  expect(iso, what).toBeDefined();
  expect(Math.abs(Date.parse(iso ?? '') - Date.now()), `${what}: ${iso}`).toBeLessThan(NEAR_MS);
};

describe('the kept sandbox stamps real time', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ scale: SCALE });
    // 300 ms real: 15 s on the scenario clock
    await new Promise((r) => setTimeout(r, 300));
  });
  afterAll(async () => sb?.close());

  it('seeded and created objects, and a pod the kubelet starts, carry the wall clock', async () => {
    const store = sb.kube.store;
    expectReal(store.list('nodes')[0]?.metadata.creationTimestamp, 'seeded node');
    const res = await fetch(`${sb.kube.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'made-now' }, data: {} }),
    });
    const made = (await res.json()) as KubeObject;
    expectReal(made.metadata.creationTimestamp, 'created ConfigMap');
    const pod = store.list('pods').find((p) => p.metadata.namespace === 'shop');
    const ready = (pod?.status as { conditions?: { type: string; lastTransitionTime?: string }[] })
      .conditions;
    expectReal(ready?.find((c) => c.type === 'Ready')?.lastTransitionTime, 'pod Ready condition');
  });

  it('while the scenario clock runs fast', () => {
    expect(sb.clock.now() - Date.now()).toBeGreaterThan(10_000);
  });
});
