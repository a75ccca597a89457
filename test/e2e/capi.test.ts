// Story: Cluster API deletes the Machine of a hypervisor node. Its Machine controller waits while any
// pre-drain hook annotation is on the Machine (cluster-api.sigs.k8s.io "Machine deletion process"),
// then drains until nodeDrainTimeout, and deletes the node whatever is left. drainer's agent keeps
// its hook on the Machine whose status.nodeRef is its node, evacuates the node once the Machine is
// deleted, and takes the hook off when the node is Evacuated: Cluster API's drain finds no VMs.
// Cluster API's drain is bench/chaos/takers.ts (the soak's); the sandbox serves the Machine CRD.
import { afterEach, describe, expect, it } from 'vitest';
import { capiDrain } from '../../bench/chaos/takers.ts';
import { PRE_DRAIN_HOOK } from '../../src/core/capi/machine.ts';
import { smallWorld } from './scenario.ts';
import { installFleetTools, machine, machineFor, MACHINES } from './capi-stack.ts';
import { gateAgent } from './gate-stack.ts';
import { stackTakerPort } from './taker-port.ts';
import { finished, startStack, until, type EventObject, type Stack } from './stack.ts';

/** Cluster API's Machine controller for a deleted Machine: the hook wait, then its drain. */
const clusterApiDeletes = (
  s: Stack,
  name: string,
  node: string,
  nodeDrainTimeoutMs: number,
  atDrain: () => void,
) =>
  capiDrain(stackTakerPort(s), node, {
    retryMs: 100,
    nodeDrainTimeoutMs,
    annotations: async () => {
      const a = (await machine(s, name))?.metadata.annotations ?? {};
      if (!Object.keys(a).some((k) => k.startsWith('pre-drain.delete.hook'))) atDrain();
      return a;
    },
  });

describe('Cluster API deletes a Machine whose node has servers (pre-drain hook)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it("waits on drainer's hook: its drain starts with no server left on the node, though nodeDrainTimeout is 1 s", async () => {
    const s = await startStack({ scenario: smallWorld({ servers: 6, migrationSeconds: 20 }) });
    stack = s;
    await installFleetTools(s);
    await machineFor(s, 'hv-a', 'node-a', { nodeDrainTimeout: '1s' });
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
    await until(
      "drainer's hook on the Machine",
      async () => (await machine(s, 'hv-a'))?.metadata.annotations?.[PRE_DRAIN_HOOK] === 'drainer',
    );

    await s.k.request({ method: 'DELETE', path: `${MACHINES}/hv-a` });
    const os = s.sandbox.openstack.state;
    let atDrain: number | undefined;
    const drain = await clusterApiDeletes(s, 'hv-a', 'node-a', 1000, () => {
      atDrain ??= os.serversOnHost('node-a').length;
    });

    // Cluster API started draining only once the hook was gone, and then no server was on the node
    expect(atDrain).toBe(0);
    expect(drain.done).toBe(true);
    expect(drain.hookWaitMs).toBeGreaterThan(1000);
    const record = await finished(s, 'node-a');
    expect(record.phase).toBe('Evacuated');
    expect(record.trigger).toBe('Machine/fleet/hv-a');
    const events = await s.k.request<{ items: EventObject[] }>({ path: '/api/v1/namespaces/fleet/events' });
    expect(events.items.map((e) => e.reason)).toContain('PreDrainHookRemoved');
  });
});

describe('the evacuation of a deleted Machine fails (pre-drain hook)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('the hook stays, an Event on the Machine says so, and drainer release takes it off with the gate', async () => {
    const s = await startStack({
      scenario: smallWorld({ servers: 2, faults: { failMigrations: ['vm-2'] } }),
    });
    stack = s;
    await installFleetTools(s);
    await machineFor(s, 'hv-a', 'node-a');
    const { drainer } = await gateAgent(s, {});
    await until(
      "drainer's hook on the Machine",
      async () => (await machine(s, 'hv-a'))?.metadata.annotations?.[PRE_DRAIN_HOOK] === 'drainer',
    );

    await s.k.request({ method: 'DELETE', path: `${MACHINES}/hv-a` });
    expect((await finished(s, 'node-a')).phase).toBe('Failed');
    const held = await until('PreDrainHookHeld Event', async () => {
      const events = await s.k.request<{ items: EventObject[] }>({ path: '/api/v1/namespaces/fleet/events' });
      return events.items.find((e) => e.reason === 'PreDrainHookHeld');
    });
    expect(held.involvedObject).toMatchObject({ kind: 'Machine', name: 'hv-a', namespace: 'fleet' });
    expect(held.message).toContain(
      `kubectl annotate machines.cluster.x-k8s.io -n fleet hv-a ${PRE_DRAIN_HOOK}-`,
    );
    expect((await machine(s, 'hv-a'))?.metadata.annotations?.[PRE_DRAIN_HOOK]).toBe('drainer');

    // the operator's choice: a release refused while vm-2 is on the host keeps the hook too
    const refused = await drainer('release', '--node', 'node-a');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      "Machine fleet/hv-a is deleted and waits on drainer's pre-drain hook: it stays too",
    );
    const forced = await drainer('release', '--node', 'node-a', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain("drainer's pre-drain hook taken off Machine fleet/hv-a");
    expect((await machine(s, 'hv-a'))?.metadata.annotations?.[PRE_DRAIN_HOOK]).toBeUndefined();
  });
});
