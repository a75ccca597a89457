// Story (issue 48 item 2): node-1's agent was taken off by `drainer.dev/agent=disabled` while VMs
// were still there, so its gate stayed. The operator moved them, and `drainer release --node node-1`
// said "in service (no drainer record)" and did nothing: nobody could open that gate but by hand.
// Now release removes a gate no agent keeps (none holds the node's Lease, the DaemonSet places none
// there), after the plugins say the host is empty; while an agent runs it refuses as before.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { kubeGateApi } from '../../src/core/gate/kube-port.ts';
import { releaseGateNow } from '../../src/core/gate/release.ts';
import { microTime } from '../../src/core/fleet/budget.ts';
import { ConfigError } from '../../src/errors.ts';
import { silentLog } from '../kube/helpers.ts';
import { runbookDaemonSet } from '../kube/agent-daemonset.ts';
import { gateObjects as gateObjectsOf } from '../kube/gate-objects.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';

const NS = 'drainer';
const config = configSchema.parse({});

describe('drainer release of a gate no agent keeps', () => {
  let fx: KubeFixture;
  beforeEach(async () => {
    fx = await startFixture();
    await fx.k.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
    // node-1 is labelled drainer.dev/agent=disabled; no agent DaemonSet places a pod on it
    await fx.k.request({
      method: 'POST',
      path: '/api/v1/nodes',
      body: node('node-1', { metadata: { name: 'node-1', labels: { 'drainer.dev/agent': 'disabled' } } }),
    });
    // the agent DaemonSet with the runbook's affinity: it places no pod on a node labelled disabled
    await fx.k.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${NS}/daemonsets`,
      body: runbookDaemonSet(),
    });
    const log = silentLog();
    const api = kubeGateApi({ k: fx.k, namespace: NS, daemonSet: 'drainer', image: 'pause', log });
    await new DrainGate({ api, log, podOf: (n) => ({ namespace: NS, name: n }) }).set('node-1', true);
  });
  afterEach(async () => fx.close());

  const gateObjects = () => gateObjectsOf(fx, 'node-1', NS);
  const release = (names: string[], force = false) =>
    releaseGateNow({
      k: fx.k,
      config,
      node: 'node-1',
      log: silentLog(),
      remaining: async () => ({ names }),
      force,
    });

  it('no VM left: the gate is removed, pod and PDB, and the drain goes on', async () => {
    const r = await release([]);

    expect(r.released).toBe(true);
    expect(r.lines[0]).toMatch(
      /^no agent runs on node node-1 and none will .*: drain gate drainer\/drainer-gate-node-1-\w+ removed with no VM left on the host/,
    );
    expect(await gateObjects()).toEqual([]);
  });

  it('VMs left: refused without --force, the gate stays; with --force it goes', async () => {
    const refused = await release(['nova/web-1']);
    expect(refused.released).toBe(false);
    expect(refused.lines[1]).toContain('kubectl label node node-1 drainer.dev/agent-');
    expect(await gateObjects()).toHaveLength(2);

    const forced = await release(['nova/web-1'], true);
    expect(forced.released).toBe(true);
    expect(await gateObjects()).toEqual([]);
  });

  it('an agent still holds the node Lease: "in service" as before, the gate stays', async () => {
    const now = new Date();
    await fx.k.request({
      method: 'POST',
      path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
      body: {
        metadata: { name: 'drainer-node-node-1' },
        spec: { holderIdentity: 'agent', leaseDurationSeconds: 300, renewTime: microTime(now) },
      },
    });

    await expect(release([])).rejects.toThrow(ConfigError);
    expect(await gateObjects()).toHaveLength(2);
  });
});
