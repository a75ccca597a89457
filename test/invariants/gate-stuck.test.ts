// The uninstall that cannot end by itself: `kubectl delete -k daemonset/` while the agents were not
// running leaves each gate pod Terminating with drainer's finalizer (only an agent drops it). doctor
// names each such pod with the one line that lets it go.
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/invariants/check.ts';
import { gateName } from '../../src/kube/gate.ts';
import { liveAgent, node, OPTS, world } from './world.ts';

const stuck = { name: gateName('node-a'), nodeName: 'node-a', ready: false, deleting: true, guarded: true };

describe('a gate pod no agent will ever let go', () => {
  it('is named, with the patch that drops the finalizer', () => {
    const w = world({ nodes: [node('node-a')], gatePods: [stuck], leases: [] });
    const found = checkInvariants(w, OPTS).filter((v) => v.id === 'gate-stuck');
    expect(found).toHaveLength(1);
    expect(found[0]?.object).toBe(`pod/drainer/${gateName('node-a')}`);
    expect(found[0]?.fix).toContain(
      `kubectl -n drainer patch pod ${gateName('node-a')} --type=merge -p '{"metadata":{"finalizers":null}}'`,
    );
  });

  it('is not stuck while the node has a live agent (it drops the finalizer once the VMs left)', () => {
    const w = world({ nodes: [node('node-a')], gatePods: [stuck], leases: [liveAgent('node-a')] });
    expect(checkInvariants(w, OPTS).filter((v) => v.id === 'gate-stuck')).toEqual([]);
  });

  it('says nothing when the Leases could not be read', () => {
    const w = world({ nodes: [node('node-a')], gatePods: [stuck] });
    expect(checkInvariants(w, OPTS).filter((v) => v.id === 'gate-stuck')).toEqual([]);
  });
});
