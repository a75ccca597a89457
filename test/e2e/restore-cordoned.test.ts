// Story (issue 48; chaos seed 16 at 351988f, round 8): node-a is cordoned for a declared reboot;
// its agent moves vm-live off and stops vm-stop where it is (marked), then opens the drain gate.
// While node-a is still cordoned (kured's drain may be running), an operator runs
// `drainer restore --force` there. The restore started vm-stop on the cordoned host, under a gate
// its agent had released: kured's drain returned with vm-stop running on the host it reboots. A
// node still in maintenance takes nothing back: vm-stop stays stopped with its mark, and the
// restore after the uncordon starts it.
import { afterEach, describe, expect, it } from 'vitest';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { STOP_MARK_KEY } from '../../src/plugins/nova/stop-mark.ts';
import { gatePodOf } from './gate-stack.ts';
import { cordonForReboot, stopAndLiveWorld } from './reboot-world.ts';
import { MERGE, finished, nodeEvents, startStack, until, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** node-a cordoned for a declared reboot, its agent done: vm-live moved, vm-stop stopped where it is. */
async function rebootEvacuated() {
  const s = (stack = await startStack({ scenario: stopAndLiveWorld(), config: { resyncInterval: 2 } }));
  const { os, vm, agent } = await cordonForReboot(s);
  expect((await finished(s, 'node-a')).phase).toBe('Evacuated');
  return { s, os, vm, agent };
}

/** The uncordon, with node-a's agent back: vm-stop runs on node-a again, unmarked, and nova-compute is enabled. */
async function uncordonWithAgentBack({ s, os, vm }: Awaited<ReturnType<typeof rebootEvacuated>>) {
  await s.cordon('node-a', false);
  const back = s.startAgent('node-a');
  await until('agent ready', () => back.agent.ready().ready);
  await until('vm-stop running again', () => vm().status === 'ACTIVE', 30_000);
  expect(vm().host).toBe('node-a');
  await until('its mark taken off', () => vm().metadata[STOP_MARK_KEY] === undefined);
  await until('nova-compute enabled', () => os.service('node-a')?.status === 'enabled');
}

describe('restore --force of a node still cordoned (full stack)', () => {
  it('starts nothing on the host; the restore after the uncordon starts the server drainer stopped', async () => {
    const { s, os, vm } = await rebootEvacuated();
    await until('the gate open', async () => (await gatePodOf(s)) === undefined, 30_000);

    // from here until the uncordon, node-a is cordoned: vm-stop must not run there
    let ranWhileCordoned = false;
    const off = os.subscribe(() => {
      if (vm().host === 'node-a' && vm().status !== 'SHUTOFF') ranWhileCordoned = true;
    });
    const restored = await stackCli(s, {
      logLevel: 'warn',
      nova: { pollInterval: 0.05 },
      drainGate: { holdTimeout: 2 },
    })('restore', '--node', 'node-a', '--force');
    // its exit code is the race's: 1 when the agent's next evacuation took the record over first,
    // and then it says so (it does not read again as the agent does)
    if (restored.code !== 0)
      expect(restored.stderr).toMatch(/its record was written by someone else while this restore ran/);
    expect(ranWhileCordoned, restored.stderr).toBe(false);
    expect(vm().status).toBe('SHUTOFF');
    expect(vm().metadata[STOP_MARK_KEY]).toMatch(/^node=node-a /);
    // nothing comes back to the host, so the restore does not wait for a gate its agent releases (the
    // agent's own evacuation may say its gate is not held yet: another Event)
    const gaveUp = (await nodeEvents(s, 'node-a', 'DrainGateNotHeld')).filter((m) =>
      /given back after waiting/.test(m),
    );
    expect(gaveUp).toEqual([]);
    // nor does Nova place anything there: nova-compute stays disabled with drainer's reason
    expect(os.service('node-a')).toMatchObject({
      status: 'disabled',
      disabledReason: expect.stringMatching(/^drainer/),
    });
    // the agent takes the maintenance over again (the node is still cordoned)
    await finished(s, 'node-a');
    off();
    expect(ranWhileCordoned).toBe(false);

    await s.cordon('node-a', false);
    await until('vm-stop running again', () => vm().status === 'ACTIVE', 30_000);
    expect(vm().host).toBe('node-a');
    await until('its mark taken off', () => vm().metadata[STOP_MARK_KEY] === undefined);
    await until('nova-compute enabled', () => os.service('node-a')?.status === 'enabled');
  }, 90_000);

  it('with no agent on the node: restores the rest, says why the server stays stopped, and the agent back after the uncordon starts it', async () => {
    const { s, os, vm, agent } = await rebootEvacuated();
    // the agent is gone (its pod evicted, the DaemonSet being rolled): nothing races the restore
    await agent.stop();

    const restored = await stackCli(s, {
      nova: { pollInterval: 0.05 },
      drainGate: { holdTimeout: 2 },
    })('restore', '--node', 'node-a', '--force');

    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain('nova: restored');
    expect(vm().status).toBe('SHUTOFF');
    expect(os.service('node-a')?.status).toBe('disabled');
    expect(vm().metadata[STOP_MARK_KEY]).toMatch(/^node=node-a /);
    expect(await nodeEvents(s, 'node-a', 'RestoreSucceeded')).toContainEqual(
      expect.stringMatching(
        /^node node-a restored \(nova\), but still to be evacuated \(cordon; a drain may run\): the host takes no VMs back until its restore after that \(the VMs drainer stopped on it stay stopped, a hypervisor service drainer disabled stays disabled\)$/,
      ),
    );

    await uncordonWithAgentBack({ s, os, vm, agent });
  }, 90_000);

  it('with its record lost too: the forced restore keeps the marked server stopped and nova-compute disabled, and the agent back after the uncordon starts it', async () => {
    const { s, os, vm, agent } = await rebootEvacuated();
    await agent.stop();
    // the record is gone (an operator cleared it; the Node was re-registered): only the marks remain
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: MERGE,
      body: { metadata: { annotations: { [STATE_ANNOTATION]: null } } },
    });

    const restored = await stackCli(s, {
      nova: { pollInterval: 0.05 },
      drainGate: { holdTimeout: 2 },
    })('restore', '--node', 'node-a', '--force');

    expect(restored.code, restored.stderr).toBe(0);
    expect(vm().status).toBe('SHUTOFF');
    expect(vm().metadata[STOP_MARK_KEY]).toMatch(/^node=node-a /);
    expect(os.service('node-a')).toMatchObject({
      status: 'disabled',
      disabledReason: expect.stringMatching(/^drainer/),
    });
    expect(await nodeEvents(s, 'node-a', 'RestoreForced')).toContainEqual(
      expect.stringMatching(
        /forced restore without a readable record .*, but still to be evacuated \(cordon; a drain may run\)/,
      ),
    );
    // nothing came back, so nothing waited for a gate no agent holds
    const gaveUp = (await nodeEvents(s, 'node-a', 'DrainGateNotHeld')).filter((m) =>
      /given back after waiting/.test(m),
    );
    expect(gaveUp).toEqual([]);

    // no record: the agent's stranded check finds drainer's marks and its disabled service
    await uncordonWithAgentBack({ s, os, vm, agent });
  }, 90_000);
});
