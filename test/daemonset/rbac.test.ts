// The ClusterRole must allow every call drainer makes, and nothing it never makes. Rather than a
// hand-kept list, run real evacuations in the sandbox (Nova + KubeVirt; a cordon, and a
// NodeMaintenance on the node whose VMI cannot migrate, shut down under nonMigratable: shutdown)
// and check every request the API server logged against daemonset/clusterrole.yaml and the
// namespaced role.yaml (fleet slots: both evacuations start at once with the default budget 1), plus the
// component components/pod-delete that nonMigratable: shutdown needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { startAgents, demoConfig, type DemoAgents } from '../../src/demo/agents.ts';
import { kubeCall } from '../../src/demo/api-calls.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { allows, callOf, granted, key, rulesOf, type Call } from './rbac-rules.ts';

const base = { rules: [...rulesOf('clusterrole.yaml'), ...rulesOf('role.yaml')] };
// this run uses kubevirt.nonMigratable: shutdown, which needs the pod-delete component
const role = { rules: [...base.rules, ...rulesOf('components/pod-delete/clusterrole.yaml')] };

/** Rules only some paths use, which this run does not take (each with the reason). */
const NOT_EXERCISED = new Set([
  // Cluster API's pre-drain hook: this run serves no Machine CRD (test/e2e/capi.test.ts does)
  'watch cluster.x-k8s.io/machines',
  'patch cluster.x-k8s.io/machines',
  // abort of a running VMI migration: evacuation.abortOnCancel and an uncordon mid-migration
  'delete kubevirt.io/virtualmachineinstancemigrations',
  // drainer as the controller of External VMIs (the demo scenario has none)
  'create kubevirt.io/virtualmachineinstancemigrations',
  // take an eviction mark back on a cancel with abortOnCancel (KubeVirt v1.8+; trigger eviction)
  'update subresources.kubevirt.io/virtualmachineinstances/evacuate/cancel',
  // drainer.dev/maintenance on a VirtualMachine (the demo's VMIs have none), and its stop/start
  'get kubevirt.io/virtualmachines',
  // restore gives a VirtualMachine stopped by drainer its runStrategy Once back
  'patch kubevirt.io/virtualmachines',
  'update subresources.kubevirt.io/virtualmachines/stop',
  'update subresources.kubevirt.io/virtualmachines/start',
  // a re-created DaemonSet takes the gate PDBs over (their owner patched to its uid; test/real/09a)
  'patch policy/poddisruptionbudgets',
  // names the blocking PodDisruptionBudget when an eviction answers 429
  'list policy/poddisruptionbudgets',
  // an eviction answered 429 watches the budgets to retry as soon as one allows a disruption
  'watch policy/poddisruptionbudgets',
  // a repeated Event is aggregated by patching its count
  'patch core/events',
  // the legacy NodeMaintenance group: the same code as medik8s, which this run uses
  'get nodemaintenance.kubevirt.io/nodemaintenances',
  'patch nodemaintenance.kubevirt.io/nodemaintenances',
  'patch nodemaintenance.kubevirt.io/nodemaintenances/status',
  // percentage budgets ("10%") count the agent DaemonSet's nodes; this run has budget 1
  'get apps/daemonsets',
  // a drain gate pod that already exists (409 on create) is read: does it still guard the node?
  'get core/pods',
  // a drain gate PDB someone altered gets its budget back
  'update policy/poddisruptionbudgets',
  // the drain gate PDB of a deleted node is removed by a live node's agent
  'delete policy/poddisruptionbudgets',
  // an absent NodeMaintenance CRD is read and watched by name (this run has both groups installed)
  'get apiextensions.k8s.io/customresourcedefinitions',
  'watch apiextensions.k8s.io/customresourcedefinitions',
]);

const NM = 'nodemaintenances.nodemaintenance.medik8s.io';

describe('RBAC covers every API call (sandbox evacuation with Nova and KubeVirt)', () => {
  let sb: Sandbox;
  let agents: DemoAgents;
  const stop = new AbortController();
  let reached: Record<string, string | undefined> = {};
  let queued = false;

  const phase = (node: string) =>
    parseRecord(sb.kube.store.get('nodes', undefined, node).metadata.annotations?.[STATE_ANNOTATION])?.phase;
  const until = async (what: string, check: () => boolean, ms = 40_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const cordon = (node: string, on: boolean) =>
    sb.kube.store.patch('nodes', undefined, node, 'application/merge-patch+json', {
      spec: { unschedulable: on ? true : null },
    });

  beforeAll(async () => {
    sb = await startSandbox({ scale: 10 });
    agents = startAgents({
      nodes: sb.scenario.nodes.map((n) => n.name),
      config: demoConfig(sb.drainerConfig, {
        kubevirt: { nonMigratable: 'shutdown' },
        drain: { force: true },
        logLevel: 'warn',
      }),
      kubeconfigYaml: sb.kube.kubeconfig(),
      log: createLogger({ level: 'silent' }),
      signal: stop.signal,
    });
    await until('agents ready', () => agents.ready());
    // the test's own changes go to the store directly: only the agents' requests reach the log
    cordon('node-1', true);
    sb.kube.store.create(NM, {
      apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
      kind: 'NodeMaintenance',
      metadata: { name: 'node-4-maintenance' },
      spec: { nodeName: 'node-4', reason: 'rbac test' },
    });
    await until('node-1 and node-4 evacuated', () =>
      ['node-1', 'node-4'].every((n) => ['Evacuated', 'Failed'].includes(phase(n) ?? '')),
    );
    reached = { 'node-1': phase('node-1'), 'node-4': phase('node-4') };
    queued = sb.kube.requestLog.some((r) => r.path.includes('labelSelector=drainer.dev%2Fqueued'));
    cordon('node-1', false);
    sb.kube.store.delete(NM, undefined, 'node-4-maintenance');
    await until('node-1 and node-4 back in service', () => !phase('node-1') && !phase('node-4'));
  }, 120_000); // two evacuations in turn (budget 1), whose VMs take the time they take to stop and start
  afterAll(async () => {
    await agents?.stop();
    await sb?.close();
  });

  it('allows every resource request the agents made', () => {
    const calls = sb.kube.requestLog.map((r) => ({ r, call: callOf(r.method, r.path) }));
    const denied = [
      ...new Set(calls.filter((c) => c.call && !allows(role.rules, c.call)).map((c) => key(c.call as Call))),
    ];
    expect(denied).toEqual([]);
    // anything that is not a resource request is API discovery (allowed to every user)
    const other = calls.filter((c) => !c.call).map((c) => new URL(c.r.path, 'http://x').pathname);
    for (const p of other) expect(p).toMatch(/^\/(api|apis)(\/[^/]+){0,2}$/);
  });

  it('grants nothing beyond what the code calls (or a known path this run does not take)', () => {
    const used = new Set(
      sb.kube.requestLog.map((r) => kubeCall(r.method, r.path)).flatMap((c) => (c ? [key(c)] : [])),
    );
    const unused = granted(role.rules).filter((g) => !used.has(g) && !NOT_EXERCISED.has(g));
    expect(unused).toEqual([]);
  });

  it('the base role lacks exactly what only nonMigratable: shutdown needs (pod delete, its component)', () => {
    const calls = sb.kube.requestLog.map((r) => callOf(r.method, r.path)).flatMap((c) => (c ? [c] : []));
    const baseDenied = [...new Set(calls.filter((c) => !allows(base.rules, c)).map(key))];
    expect(baseDenied).toEqual(['delete core/pods']);
  });

  it('ran the paths it claims: both evacuations and restores, the VMI shut down', () => {
    expect(reached).toEqual({ 'node-1': 'Evacuated', 'node-4': 'Evacuated' });
    expect(queued).toBe(true); // one of them waited for the fleet slot
    expect(sb.openstack.state.serversOnHost('node-1.cloud.example.org')).toEqual([]);
    const legacy = sb.kube.store
      .list('virtualmachineinstances.kubevirt.io')
      .find((v) => v.metadata.name === 'vm-legacy');
    expect((legacy?.status as { phase?: string } | undefined)?.phase).not.toBe('Running');
  });
});
