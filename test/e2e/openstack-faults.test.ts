// Story: OpenStack misbehaves while drainer works — tokens expire, Nova answers 5xx — and the
// evacuation still completes.
import { afterEach, describe, expect, it } from 'vitest';
import { smallWorld } from './scenario.ts';
import { finished, startStack, until, type Stack } from './stack.ts';

describe('OpenStack faults (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());
  it('re-authenticates when the Keystone token expires mid-run', async () => {
    const world = smallWorld({ servers: 4 });
    stack = await startStack({
      scenario: { ...world, openstack: { ...world.openstack, tokenTtlSeconds: 15 } },
    });
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await finished(stack, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    const auths = stack.sandbox.openstack.requestLog.filter(
      (r) => r.method === 'POST' && r.path.endsWith('/auth/tokens'),
    );
    expect(auths.length).toBeGreaterThan(1);
  });

  it('completes with 20 % of Nova requests answering 503', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 4, faults: { errorRate: 0.2 } }) });
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await finished(stack, 'node-a');

    expect(rec.lastError).toBeUndefined();
    expect(rec.phase).toBe('Evacuated');
    expect(stack.sandbox.openstack.state.serversOnHost('node-a')).toEqual([]);
    expect(stack.sandbox.openstack.requestLog.some((r) => r.status >= 500)).toBe(true);
  });
});
