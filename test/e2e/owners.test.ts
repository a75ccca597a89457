// Stories of issue 35 on the full stack: VMs take the time they take in Nova, and have owners who
// act meanwhile. Each ends with drainer's promises checked (src/invariants), among them that no
// server drainer stopped is left stopped once its node is back in service.
import { afterEach, describe, expect, it } from 'vitest';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import { nova, token } from '../sandbox/openstack/client.ts';
import { smallWorld } from './scenario.ts';
import { finished, nodeEvents, startStack, until, type Stack } from './stack.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** node-a holds vm-stop (way out stop; Nova's default 60 s shutdown, 3 s real); a reboot is declared. */
async function start() {
  const base = smallWorld({ servers: 0 });
  stack = await startStack({
    scenario: {
      ...base,
      openstack: {
        ...base.openstack,
        servers: [
          { name: 'vm-stop', project: 'alpha', host: 'node-a', metadata: { [MAINTENANCE_KEY]: 'stop' } },
        ],
      },
    },
    config: { resyncInterval: 1 },
  });
  const s = stack;
  await s.k.request({
    method: 'PATCH',
    path: '/api/v1/nodes/node-a',
    contentType: 'application/merge-patch+json',
    body: { metadata: { annotations: { 'drainer.dev/reboot': 'true' } } },
  });
  const agent = s.startAgent('node-a');
  await until('agent ready', () => agent.agent.ready().ready);
  const os = s.sandbox.openstack.state;
  const vm = () => os.servers().find((x) => x.name === 'vm-stop')!;
  return { s, vm };
}

describe('VMs take time and have owners (full stack, Nova)', () => {
  it('an uncordon in the middle of drainer’s stop: the stop ends, and the server runs again at the end', async () => {
    const { s, vm } = await start();

    await s.cordon('node-a');
    // drainer's os-stop is in: Nova powers the guest off for up to its shutdown_timeout
    await until('vm-stop powering off', () => vm().taskState === 'powering-off');
    await s.cordon('node-a', false);
    await until('restored', async () => (await s.record('node-a')) === undefined);

    expect([vm().host, vm().status, vm().taskState]).toEqual(['node-a', 'ACTIVE', null]);
    await s.assertPromisesKept();
  });

  it('its owner starts the stopped server while the node is Evacuated: the drain gate holds again and drainer stops it again', async () => {
    const { s, vm } = await start();
    // the operator declared a reboot: the stopped server stays on the host and the gate opens
    s.expectBroken('gate-disrupted-while-occupied', 'a declared reboot keeps vm-stop on the host on purpose');
    await s.cordon('node-a');
    expect((await finished(s, 'node-a')).phase).toBe('Evacuated');
    expect(vm().status).toBe('SHUTOFF');

    // the owner wants it back, maintenance or not
    const t = await token(s.sandbox.openstack);
    await nova(s.sandbox.openstack, 'POST', `/servers/${vm().id}/action`, {
      token: t,
      version: '2.93',
      body: { 'os-start': null },
    });
    await until('vm-stop running', () => vm().status === 'ACTIVE' && vm().taskState === null);
    const held = await until('gate held again', async () =>
      (await nodeEvents(s, 'node-a', 'DrainGateHeld')).find((m) => /wait again/.test(m)),
    );
    await until('stopped again', () => vm().status === 'SHUTOFF' && vm().taskState === null, 20_000);
    expect((await finished(s, 'node-a')).phase).toBe('Evacuated');

    expect(held).toMatch(/nova\/vm-stop/);
    await s.cordon('node-a', false);
    await until('restored', async () => (await s.record('node-a')) === undefined, 20_000);
    expect(vm().status).toBe('ACTIVE');
    await s.assertPromisesKept();
  });
});
