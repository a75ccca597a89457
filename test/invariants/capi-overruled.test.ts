// Cluster API never gives up on a drain while drainer's pre-drain hook held its Machine
// (src/invariants/rules/capi-overruled.ts; the soak judges each Cluster API drain with it).
import { describe, expect, it } from 'vitest';
import { overruledUnderHook, type ObservedCapiDrain } from '../../src/invariants/rules/capi-overruled.ts';

const gaveUp: ObservedCapiDrain = {
  node: 'hv-1',
  hooked: true,
  ok: false,
  contradicted: false,
  released: false,
  occupying: ['server hv-1-vm1'],
};

describe('a Cluster API drain overruled while drainer held the hook', () => {
  it('is a violation when it gave up with VMs on the host', () => {
    expect(overruledUnderHook(gaveUp)).toMatchObject({
      id: 'drain-overruled-under-hook',
      object: 'node/hv-1',
    });
  });

  it('not without the hook (nodeDrainTimeout is Cluster API’s to keep), nor stopped, given back, released or empty', () => {
    for (const d of [
      { ...gaveUp, hooked: false },
      { ...gaveUp, stopped: true },
      { ...gaveUp, contradicted: true },
      { ...gaveUp, released: true },
      { ...gaveUp, occupying: [] },
      { ...gaveUp, ok: true },
    ])
      expect(overruledUnderHook(d)).toBeUndefined();
  });
});
