// Story (issue 48 item 1): drainer stops a server (way out stop, a declared reboot) and marks it
// in Nova (metadata drainer.dev:stopped) before the os-stop. Right after the stop, the Node is
// deleted and registered again (Karpenter, Cluster API, a re-installed kubelet), which takes the
// record along. The node's agent finds the mark on the server of its host once the node is in
// service, starts the server and takes the mark off: the server is ACTIVE, as the sandbox's Nova
// holds it, and no promise is broken.
import { afterEach, describe, expect, it } from 'vitest';
import { STOP_MARK_KEY } from '../../src/plugins/nova/stop-mark.ts';
import { nova, token } from '../sandbox/openstack/client.ts';
import { cordonForReboot, stopAndLiveWorld } from './reboot-world.ts';
import { nodeEvents, startStack, until, type Stack } from './stack.ts';
import { deleteNode, registerAgain } from './re-register.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('a server drainer stopped outlives its Node (full stack)', () => {
  it('the Node deleted and registered again right after the stop: the server runs again once the node is in service', async () => {
    const s = (stack = await startStack({ scenario: stopAndLiveWorld(), config: { resyncInterval: 1 } }));
    // the declared reboot keeps vm-stop on the host on purpose while the gate is open
    const { os, vm } = await cordonForReboot(s);
    // the mark names the maintenance, and is on the server before the record is gone
    expect(vm().metadata[STOP_MARK_KEY]).toMatch(/^node=node-a trigger=\S+ after=\S+/);

    await registerAgain(s, await deleteNode(s, 'node-a'));

    await until('vm-stop running again', () => vm().status === 'ACTIVE', 30_000);
    expect(vm().host).toBe('node-a');
    await until('its mark taken off', () => vm().metadata[STOP_MARK_KEY] === undefined);
    expect(os.service('node-a')?.status).toBe('enabled');
    const told = await until('StrandedService Event', async () =>
      (await nodeEvents(s, 'node-a', 'StrandedService')).find((m) => m.includes('vm-stop')),
    );
    expect(told).toMatch(
      /server\(s\) drainer stopped on node-a: vm-stop .* restored, the node is in service/,
    );
  });

  it('its owner moves it cold onto a node in service after the record was lost: that node’s agent starts it at its next look', async () => {
    const s = (stack = await startStack({
      scenario: stopAndLiveWorld(),
      config: { resyncInterval: 1, strandedCheckInterval: 3 },
    }));
    // node-b's agent looked for leftovers at its start: nothing then
    const b = s.startAgent('node-b');
    await until('node-b ready', () => b.agent.ready().ready);
    const { os, vm, agent: a } = await cordonForReboot(s);
    const owner = async (body: object) => {
      const r = await nova(s.sandbox.openstack, 'POST', `/servers/${vm().id}/action`, {
        token: await token(s.sandbox.openstack),
        version: '2.93',
        body,
      });
      expect(r.status).toBeLessThan(300);
    };
    expect(vm().metadata[STOP_MARK_KEY]).toBeDefined();

    // node-a's agent is taken off and its Node deleted: the record that claimed vm-stop is gone
    await a.stop();
    const old = await deleteNode(s, 'node-a');
    // its owner moves it cold to node-b (Nova keeps it off) and confirms
    await owner({ migrate: { host: 'node-b' } });
    await until('moved', () => vm().status === 'VERIFY_RESIZE' && !vm().taskState, 30_000);
    await owner({ confirmResize: null });
    // Nova keeps it off; node-b's next look (every 3 s) may start it before a read sees it SHUTOFF
    await until('confirmed', () => vm().status !== 'VERIFY_RESIZE', 30_000);
    expect(vm().host).toBe('node-b');

    await until('vm-stop running again on node-b', () => vm().status === 'ACTIVE', 30_000);
    expect(vm().host).toBe('node-b');
    await until('its mark taken off', () => vm().metadata[STOP_MARK_KEY] === undefined);
    // node-a comes back (a re-installed kubelet) and its agent with it: nothing of drainer's is left there
    await registerAgain(s, old);
    s.startAgent('node-a');
    await until('node-a in service', async () => os.service('node-a')?.status === 'enabled', 30_000);
  }, 90_000);
});
