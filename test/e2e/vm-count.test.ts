// Story: one count of VMs (issue 52 item 2). node-a keeps three servers after its evacuation: a
// SHUTOFF one drainer may not move cold (nova.coldMigrateStopped false), an ACTIVE one whose
// migration fails, and one in ERROR left there by policy (nova.onError skip). The Evacuated node
// (drain.requirePluginsSucceeded false) holds its gate, and `status`, `plan`, `release` and the
// agent's metric all say the same: 3 VMs, of them 1 stopped.
import { afterEach, describe, expect, it } from 'vitest';
import { smallWorld } from './scenario.ts';
import { gateRunning } from './gate-stack.ts';
import { stackCli } from './stack-cli.ts';
import { startStack, until, type Stack } from './stack.ts';

const world = () => {
  const w = smallWorld({ servers: 1, faults: { failMigrations: ['failing'] } });
  w.openstack.servers = [
    { name: 'moves', project: 'alpha', host: 'node-a' },
    { name: 'stopped', project: 'alpha', host: 'node-a', state: 'SHUTOFF' },
    { name: 'failing', project: 'alpha', host: 'node-a' },
    { name: 'broken', project: 'alpha', host: 'node-a', state: 'ERROR' },
  ] as typeof w.openstack.servers;
  return w;
};

const POLICY = {
  nova: { coldMigrateStopped: false, onError: 'skip' },
  drain: { requirePluginsSucceeded: false },
};

describe('one count of VMs (issue 52 item 2)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('a node with a SHUTOFF server shows the same count in status, plan, release and the metric', async () => {
    const s = await startStack({ scenario: world(), config: POLICY });
    stack = s;
    const agent = s.startAgent('node-a');
    await gateRunning(s);
    await s.cordon('node-a');
    // the failing server's retries take a while on a loaded machine
    const phase = await until(
      'node-a evacuated',
      async () => {
        const p = (await s.record('node-a'))?.phase;
        return p === 'Evacuated' || p === 'Failed' ? p : undefined;
      },
      60_000,
    );
    expect(phase).toBe('Evacuated');
    const onHost = s.sandbox.openstack.state.serversOnHost('node-a').map((v) => v.name);
    expect(onHost.sort()).toEqual(['broken', 'failing', 'stopped']);
    const drainer = stackCli(s, { ...POLICY, logLevel: 'error' });

    const status = await drainer('status', '-o', 'json');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('3 VMs (of them 1 stopped)');

    const plan = await drainer('plan', '--node', 'node-a');
    expect(plan.stdout).toContain('nova (node-a): 3 VMs (of them 1 stopped) on node node-a');

    const release = await drainer('release', '--node', 'node-a');
    expect(release.code).toBe(3);
    expect(release.stderr).toContain('node node-a still has 3 VMs (of them 1 stopped: ');

    const metrics = await agent.metrics.text();
    expect(metrics).toContain('drainer_node_vms{plugin="nova",state="running"} 2');
    expect(metrics).toContain('drainer_node_vms{plugin="nova",state="stopped"} 1');
  });
});
