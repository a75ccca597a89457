// Story: an agent in a namespace without its DaemonSet (run-once's way, the sandbox) says once, not
// twice, that its drain gate's PDB has no owner (issue 52: the daemon logged it twice, once for the
// reconciler's gate and once for the gate keeper, each with its own API port).
import { afterEach, describe, expect, it } from 'vitest';
import { smallWorld } from './scenario.ts';
import { gateRunning } from './gate-stack.ts';
import { startStack, until, type Stack } from './stack.ts';

describe('the agent says a thing once', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('"no agent DaemonSet" is logged once by a running agent whose gate is held and then released', async () => {
    const s = await startStack({ scenario: smallWorld({ servers: 1 }) });
    stack = s;
    const agent = s.startAgent('node-a');
    await gateRunning(s);
    await s.cordon('node-a');
    await until('evacuated', async () => (await s.record('node-a'))?.phase === 'Evacuated', 60_000);
    await agent.stop();
    const said = s.logLines.filter((l) => l.includes('no agent DaemonSet'));
    expect(said).toHaveLength(1);
  });
});
