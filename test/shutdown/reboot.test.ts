// Stories (issue 49's suite): `systemctl reboot` on a host with a real systemd-logind, the agent on its
// system bus, the sandbox's Kubernetes and Nova. Each story ends by checking drainer's promises
// (stack.close). The first prints the figures for BENCHMARKS.md at 8 servers: PrepareForShutdown to the
// first migration started, and to the lock released.
import { afterEach, describe, expect, it } from 'vitest';
import { smallWorld } from '../e2e/scenario.ts';
import { startStack, until, type Stack } from '../e2e/stack.ts';
import { agentOnHost, fieldOf, lockListed, NODE, timeOf } from './agent.ts';
import { hostUnavailable } from './host.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function stack(servers: number): Promise<Stack> {
  const s = await startStack({ scenario: smallWorld({ servers }) });
  cleanups.push(() => s.close());
  return s;
}

describe.skipIf(hostUnavailable() !== undefined)('systemctl reboot against a real logind', () => {
  it('with 8 servers on the host: cordons, evacuates, gives the lock back once the host is empty, and the reboot goes on', async () => {
    const s = await stack(8);
    const on = await agentOnHost(s, 60);
    cleanups.push(() => on.down());
    await until('lock held', () => lockListed(on.host));

    on.host.reboot();
    await on.host.ended;

    expect(s.sandbox.openstack.state.serversOnHost(NODE)).toEqual([]);
    expect(await s.record(NODE)).toMatchObject({ trigger: 'shutdown', cordonedByUs: true });
    expect((await s.node(NODE)).spec?.unschedulable).toBe(true);
    // PrepareForShutdown came at releaseBy - (cap - margin): 60 s - 5 s
    const prepare =
      Date.parse(String(fieldOf(s, /evacuating before logind's deadline/, 'releaseBy'))) - 55_000;
    const first = timeOf(s, /^migration started$/) - prepare;
    const released = timeOf(s, /the host is empty, delay lock released/) - prepare;
    process.stderr.write(
      `shutdown figures, 8 servers: PrepareForShutdown → first migration started ${first} ms, → lock released ${released} ms\n`,
    );
    expect(released).toBeLessThan(55_000);
  });
});
