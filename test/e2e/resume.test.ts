// Story: the agent dies in the middle of an evacuation; the next one resumes from the record and
// never asks Nova to move a server twice. And an uncordon in the middle cancels the evacuation.
import { afterEach, describe, expect, it } from 'vitest';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

describe('crash and cancel (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('a new agent after a kill mid-evacuation moves every server, none twice', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 5, migrationSeconds: 12 }) });
    const os = stack.sandbox.openstack.state;
    const first = stack.startAgent('node-a');
    await until('first agent ready', () => first.agent.ready().ready);

    await stack.cordon('node-a');
    await until(
      'two migrations started',
      () => os.servers().filter((s) => os.migrateCalls(s.id) > 0).length >= 2,
    );
    await first.stop(); // SIGTERM: no new work, the record stays

    const mid = await stack.record('node-a');
    expect(mid?.phase).toBe('Evacuating');
    expect((await stack.node('node-a')).spec?.unschedulable).toBe(true);

    const second = stack.startAgent('node-a');
    const rec = await until('evacuated by the second agent', async () => {
      const r = await stack?.record('node-a');
      return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
    });

    expect(rec.phase).toBe('Evacuated');
    expect(os.serversOnHost('node-a')).toEqual([]);
    for (const s of os.servers()) expect(os.migrateCalls(s.id), s.name).toBe(1);
    expect(second.agent.ready().ready).toBe(true);
  });

  it('an uncordon mid-evacuation stops new migrations and puts the node back', async () => {
    // more servers than the agent submits at once (M = 1 plus 5 queued ahead)
    stack = await startStack({ scenario: smallWorld({ servers: 8, migrationSeconds: 12 }) });
    const os = stack.sandbox.openstack.state;
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    await until('a migration started', () => os.servers().some((s) => os.migrateCalls(s.id) > 0));
    await stack.cordon('node-a', false);
    await until('restored', async () => (await stack?.record('node-a')) === undefined);

    const started = os.servers().filter((s) => os.migrateCalls(s.id) > 0).length;
    expect(started).toBeLessThan(8);
    expect(os.service('node-a')).toMatchObject({ status: 'enabled' });
    expect((await stack.node('node-a')).spec?.taints ?? []).toEqual([]);
  });
});
