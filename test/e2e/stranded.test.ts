// Story (issue 27 item 6): a hypervisor node is evacuated, then its Node object is deleted and
// registered again (a machine replacement, a re-install), which takes drainer's record with it.
// nova-compute stays disabled with drainer's reason: a stranded service. The invariants see it
// while the Node is gone; the agent, once the node is back in service, enables the service again,
// says so in an Event, and `drainer status` shows it.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeNode } from '../../src/kube/types.ts';
import { smallWorld } from './scenario.ts';
import { finished, nodeEvents, startStack, until, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';
import { deleteNode, registerAgain } from './re-register.ts';

describe('stranded services (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  async function evacuatedThenDeleted(s: Stack): Promise<KubeNode> {
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
    await s.cordon('node-a');
    expect((await finished(s, 'node-a')).phase).toBe('Evacuated');
    return deleteNode(s, 'node-a');
  }

  it('a Node deleted and registered again gets its nova-compute back, with an Event and a status line', async () => {
    const s = (stack = await startStack({ scenario: smallWorld({ servers: 2, migrationSeconds: 4 }) }));
    const os = s.sandbox.openstack.state;
    const old = await evacuatedThenDeleted(s);

    // the record went with the Node: the service is disabled by drainer and nobody owns it
    expect(os.service('node-a')).toMatchObject({
      status: 'disabled',
      disabledReason: expect.stringMatching(/^drainer:/),
    });
    const stranded = (await s.violations()).filter((v) => v.id === 'stranded-service');
    expect(stranded.map((v) => v.object)).toEqual(['nova-compute/node-a']);

    await registerAgain(s, old);
    await until('service enabled again', () => os.service('node-a')?.status === 'enabled');
    const told = await until(
      'StrandedService Event',
      async () => (await nodeEvents(s, 'node-a', 'StrandedService'))[0],
    );
    expect(told).toMatch(
      /nova-compute service on node-a was left by drainer .* restored, the node is in service/,
    );

    const status = await stackCli(s)('status', '-o', 'json');
    const rows = (
      JSON.parse(status.stdout) as { nodes: { node: string; phase: string; lastError?: string }[] }
    ).nodes;
    expect(rows.find((r) => r.node === 'node-a')).toMatchObject({
      phase: 'InService',
      lastError: expect.stringContaining('restored'),
    });
    expect(await s.violations()).toEqual([]);
  });
});
