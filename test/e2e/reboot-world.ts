// What the stories of a declared reboot share: node-a holding vm-stop (its way out is a stop) and
// vm-live, and the reboot declared on node-a (drainer.dev/reboot), so vm-stop is stopped where it is.
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import { smallWorld } from './scenario.ts';
import { until, type Stack } from './stack.ts';

export function stopAndLiveWorld() {
  const base = smallWorld({ servers: 0 });
  return {
    ...base,
    openstack: {
      ...base.openstack,
      servers: [
        { name: 'vm-stop', project: 'alpha', host: 'node-a', metadata: { [MAINTENANCE_KEY]: 'stop' } },
        { name: 'vm-live', project: 'alpha', host: 'node-a' },
      ],
    },
  };
}

/** Declares node-a's maintenance a reboot; vm-stop then stays on the host on purpose while the gate is open. */
export async function declareReboot(s: Stack): Promise<void> {
  await s.k.request({
    method: 'PATCH',
    path: '/api/v1/nodes/node-a',
    contentType: 'application/merge-patch+json',
    body: { metadata: { annotations: { 'drainer.dev/reboot': 'true' } } },
  });
  s.expectBroken('gate-disrupted-while-occupied', 'a declared reboot keeps vm-stop on the host on purpose');
}

/** The reboot declared, node-a's agent started and node-a cordoned: until vm-stop is stopped where it is. */
export async function cordonForReboot(s: Stack) {
  const os = s.sandbox.openstack.state;
  const vm = () => os.servers().find((x) => x.name === 'vm-stop')!;
  await declareReboot(s);
  const agent = s.startAgent('node-a');
  await until('agent ready', () => agent.agent.ready().ready);
  await s.cordon('node-a');
  await until('vm-stop stopped', () => vm().status === 'SHUTOFF', 30_000);
  return { os, vm, agent };
}
