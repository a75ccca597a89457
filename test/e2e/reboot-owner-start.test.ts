// Story: node-a's maintenance is a declared reboot (kured's, say). drainer stops vm-stop where it is
// (its way out is a stop), moves vm-live, and the node is Evacuated: the gate opens. Then vm-stop's
// owner starts it again right there, before the reboot: Nova accepts it, since a start needs no
// placement. The agent listed an Evacuated host once per resync (300 s by default), so a drain in
// those minutes returned with vm-stop running and the reboot killed it. For a declared reboot it
// lists the host every REBOOT_RECHECK_MS: the gate holds again within that, and the evacuation
// resumes (vm-stop's way out stops it again; its owner asked for that), then opens the gate again.
import { afterEach, describe, expect, it } from 'vitest';
import { REBOOT_RECHECK_MS } from '../../src/core/gate/recheck.ts';
import { nova, token } from '../sandbox/openstack/client.ts';
import { gatePodOf } from './gate-stack.ts';
import { cordonForReboot, stopAndLiveWorld } from './reboot-world.ts';
import { finished, nodeEvents, startStack, until, type Stack } from './stack.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('a declared reboot: a server its owner starts on the host after the gate opened', () => {
  it('holds the gate again within REBOOT_RECHECK_MS, not a resync later, and evacuates again', async () => {
    const s = (stack = await startStack({ scenario: stopAndLiveWorld(), config: { resyncInterval: 300 } }));
    const { vm } = await cordonForReboot(s);
    expect((await finished(s, 'node-a')).phase).toBe('Evacuated');
    await until('gate opened', async () => (await gatePodOf(s)) === undefined, 30_000);

    const r = await nova(s.sandbox.openstack, 'POST', `/servers/${vm().id}/action`, {
      token: await token(s.sandbox.openstack),
      version: '2.93',
      body: { 'os-start': null },
    });
    expect(r.status).toBe(202);
    await until('vm-stop running on node-a', () => vm().status === 'ACTIVE' && !vm().taskState, 30_000);
    const started = Date.now();
    expect(vm().host).toBe('node-a');

    // held again: its pod back while vm-stop runs on the host, and the Event names it
    await until(
      'gate held again',
      async () => (await gatePodOf(s)) !== undefined,
      REBOOT_RECHECK_MS + 10_000,
    );
    const heldAfterMs = Date.now() - started;
    expect(vm().status).toBe('ACTIVE');
    expect(heldAfterMs).toBeLessThan(REBOOT_RECHECK_MS + 10_000);
    const told = await until('DrainGateHeld Event', async () =>
      (await nodeEvents(s, 'node-a', 'DrainGateHeld')).find((m) => m.includes('vm-stop')),
    );
    expect(told).toMatch(/after it was evacuated/);

    // the evacuation resumes: vm-stop is stopped again where it is, and the gate opens again
    await until('vm-stop stopped again', () => vm().status === 'SHUTOFF' && !vm().taskState, 30_000);
    expect(vm().host).toBe('node-a');
    await until('Evacuated again', async () => (await s.record('node-a'))?.phase === 'Evacuated', 30_000);
    await until('gate opened again', async () => (await gatePodOf(s)) === undefined, 30_000);
  }, 120_000);
});
