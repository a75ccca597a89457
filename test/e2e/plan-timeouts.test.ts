// Story (issue 50 item 2): fleet tools that give up on a held drain, found before they fire. node-a
// holds five servers; drainer moves one at a time with a 30 min deadline each, so its evacuation may
// take 2h30m. A Karpenter NodePool whose terminationGracePeriod is 10m, and a Cluster API Machine
// whose MachineDeployment's template sets nodeDrainTimeout 5m, would each delete the node with VMs
// on it: `drainer plan` says so in one line each, with what to change, before anything is deleted.
import { afterEach, describe, expect, it } from 'vitest';
import { machinesPath } from '../../src/core/capi/kube-port.ts';
import { PRE_DRAIN_HOOK } from '../../src/core/capi/machine.ts';
import { CAPI, installFleetTools, machineFor, MACHINES } from './capi-stack.ts';
import { smallWorld } from './scenario.ts';
import { nodeEvents, startStack, until, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';

const MERGE = 'application/merge-patch+json';
const warnings = (out: string) => out.split('\n').filter((l) => l.startsWith('warning: '));

const nodePool = (s: Stack, terminationGracePeriod: string) =>
  s.k.request({
    method: 'POST',
    path: '/apis/karpenter.sh/v1/nodepools',
    body: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'hypervisors' },
      spec: { template: { spec: { terminationGracePeriod, nodeClassRef: { name: 'x' } } } },
    },
  });

const inPool = (s: Stack) =>
  s.k.request({
    method: 'PATCH',
    path: '/api/v1/nodes/node-a',
    contentType: MERGE,
    body: { metadata: { labels: { 'karpenter.sh/nodepool': 'hypervisors' } } },
  });

let stack: Stack | undefined;
afterEach(async () => stack?.close());

/** node-a with five servers, the stack this test's (closed after it); the fleet tools' CRDs installed unless told. */
async function fiveServers(tools = true): Promise<Stack> {
  const s = await startStack({ scenario: smallWorld({ servers: 5 }) });
  stack = s;
  if (tools) await installFleetTools(s);
  return s;
}

/** node-a's agent, started and ready. */
async function agentReady(s: Stack): Promise<void> {
  const agent = s.startAgent('node-a');
  await until('agent ready', () => agent.agent.ready().ready);
}

/** node-a in a NodePool that gives Karpenter 10m, its agent ready. */
async function inTenMinutePool(): Promise<Stack> {
  const s = await fiveServers();
  await nodePool(s, '10m');
  await inPool(s);
  await agentReady(s);
  return s;
}

const drainTimeoutShort = (s: Stack) =>
  until('DrainTimeoutShort Event', async () => {
    const found = await nodeEvents(s, 'node-a', 'DrainTimeoutShort');
    return found.length ? found : undefined;
  });

describe('drainer plan finds the fleet tools that would delete the node with VMs on it', () => {
  const start = async () => {
    const s = await fiveServers();
    return { s, plan: () => stackCli(s, { logLevel: 'warn' })('plan', '--node', 'node-a') };
  };

  it("a Karpenter NodePool's terminationGracePeriod shorter than the evacuation", async () => {
    const { s, plan } = await start();
    await nodePool(s, '10m');
    expect(warnings((await plan()).stdout)).toEqual([]); // the node is no NodePool's yet
    await inPool(s);

    const r = await plan();
    expect(r.code, r.stderr).toBe(0);
    expect(warnings(r.stdout)).toEqual([
      "warning: Karpenter: NodePool hypervisors has terminationGracePeriod 10m, shorter than this node's evacuation may take (2h30m: 5 nova VMs, 1 at a time, up to 30m each): Karpenter would delete the node with VMs on it; raise spec.template.spec.terminationGracePeriod of the NodePool above it, or unset it (no timeout)",
    ]);
  });

  it("a Cluster API Machine's nodeDrainTimeout (from its MachineDeployment's template), until drainer's hook is on it", async () => {
    const { s, plan } = await start();
    await s.k.request({
      method: 'POST',
      path: `${CAPI}/machinedeployments`,
      body: {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'MachineDeployment',
        metadata: { name: 'hv', namespace: 'fleet' },
        spec: { clusterName: 'hv', template: { spec: { nodeDrainTimeout: '5m' } } },
      },
    });
    await s.k.request({
      method: 'POST',
      path: `${CAPI}/machinesets`,
      body: {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'MachineSet',
        metadata: {
          name: 'hv-1',
          namespace: 'fleet',
          ownerReferences: [
            { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', name: 'hv', uid: 'u' },
          ],
        },
        spec: { clusterName: 'hv', template: { spec: {} } },
      },
    });
    await machineFor(s, 'hv-1-a', 'node-a', { machineSet: 'hv-1' });

    const r = await plan();
    expect(r.code, r.stderr).toBe(0);
    expect(warnings(r.stdout)).toEqual([
      "warning: Cluster API: Machine fleet/hv-1-a has nodeDrainTimeout (MachineDeployment fleet/hv's template) 5m, shorter than this node's evacuation may take (2h30m: 5 nova VMs, 1 at a time, up to 30m each): Cluster API would delete the node with VMs on it; turn drainer's pre-drain hook on (clusterAPI.preDrainHook: true, the default, where its agent sees the Machine), or unset nodeDrainTimeout (0: no timeout) in the MachineDeployment's template",
    ]);

    // with drainer's hook on the Machine the timeout starts only once the VMs are gone
    await s.k.request({
      method: 'PATCH',
      path: `${MACHINES}/hv-1-a`,
      contentType: MERGE,
      body: { metadata: { annotations: { [PRE_DRAIN_HOOK]: 'drainer' } } },
    });
    expect(warnings((await plan()).stdout)).toEqual([]);
  });
});

describe('a maintenance start warns of a fleet tool that would delete the node with VMs on it', () => {
  it('a cordon of a node whose NodePool gives Karpenter 10m: a DrainTimeoutShort Event on the Node', async () => {
    const s = await inTenMinutePool();

    await s.cordon('node-a');
    const [warning, ...more] = await drainTimeoutShort(s);
    expect(more).toEqual([]);
    expect(warning).toMatch(/^Karpenter: NodePool hypervisors has terminationGracePeriod 10m, shorter than/);
  });

  it('reads no Machines at the cordon: the Machine watch of the pre-drain hook has them (issue 51)', async () => {
    const s = await inTenMinutePool();
    const machineLists = () =>
      s.sandbox.kube.requestLog.filter(
        (r) => r.method === 'GET' && r.path.startsWith(machinesPath) && !/[?&]watch=/.test(r.path),
      ).length;
    // the hook's Machine watch lists them once, then watches
    await until('the Machine watch', () =>
      s.sandbox.kube.requestLog.some((r) => r.path.startsWith(`${machinesPath}?watch=`)),
    );
    const before = machineLists();

    await s.cordon('node-a');
    await drainTimeoutShort(s);
    expect(machineLists()).toBe(before);
  });

  it('reads no Machines at the cordon where Cluster API is not installed (issue 51)', async () => {
    const s = await fiveServers(false);
    await agentReady(s);
    // the hook looked once: Machines are not served
    await until('the look for Machines', () =>
      s.sandbox.kube.requestLog.some((r) => r.path.startsWith(machinesPath)),
    );
    const reads = () => s.sandbox.kube.requestLog.filter((r) => r.path.startsWith(machinesPath)).length;
    const before = reads();

    await s.cordon('node-a');
    await until('Evacuated', async () => (await s.record('node-a'))?.phase === 'Evacuated');
    expect(reads()).toBe(before);
  });
});
