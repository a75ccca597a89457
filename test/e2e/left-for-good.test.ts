// Story (chaos seed 2 round 155, at two stops): the operator takes node-a's agent off
// (drainer.dev/agent=disabled) while Nova cold-migrates vm-cold for node-a's evacuation. No
// successor comes. The move lands and waits in VERIFY_RESIZE for a confirm that only drainer gives:
// nobody gave it, and the server stayed there, its old host's resources held. The stopping agent now
// follows the move and confirms it where it lands, within its stop; the record says Failed (nobody
// goes on with the rest), and vm-cold runs on node-b, its resize confirmed.
import { afterEach, describe, expect, it } from 'vitest';
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import type { KubeNode } from '../../src/kube/types.ts';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import { runbookDaemonSet } from '../kube/agent-daemonset.ts';
import { gateAgent, takeAgentOff } from './gate-stack.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** node-a holds vm-cold, whose owner chose the cold way out; a move takes 60 s (3 s real). */
function coldWorld() {
  const base = smallWorld({ servers: 0, migrationSeconds: 60 });
  const cold = { name: 'vm-cold', project: 'alpha', host: 'node-a', metadata: { [MAINTENANCE_KEY]: 'cold' } };
  return { ...base, openstack: { ...base.openstack, servers: [cold] } };
}

describe("an agent taken off its node while drainer's cold migration runs", () => {
  it('confirms the resize where it lands before it stops: nothing drainer started is left waiting for it', async () => {
    stack = await startStack({ scenario: coldWorld() });
    const s = stack;
    const os = s.sandbox.openstack.state;
    const vm = () => os.servers().find((x) => x.name === 'vm-cold')!;
    const moves = () => os.migrations(vm().id).map((m) => m.status);
    await s.k.request({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/drainer/daemonsets',
      body: runbookDaemonSet(),
    });
    const { agent } = await gateAgent(s, {});
    await s.cordon('node-a');
    await until('vm-cold moving', () => moves().includes('migrating'), 30_000);

    await takeAgentOff(s, agent);

    // the confirm went out before the stop ended; Nova finishes it a moment later
    await until('resize confirmed', () => moves().join() === 'confirmed', 10_000);
    expect(vm()).toMatchObject({ host: 'node-b', status: 'ACTIVE' });
    const n = await s.k.request<KubeNode>({ path: '/api/v1/nodes/node-a' });
    const rec = parseRecord(n.metadata.annotations?.[STATE_ANNOTATION]);
    expect(rec?.phase).toBe('Failed');
    expect(rec?.lastError).toMatch(/agent stopped for good/);
  });
});
