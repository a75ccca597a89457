// An agent taken off its node by label (issue 48), the runbook's way: the agent-affinity patch in the overlay
// (docs/operations.md "Stopping drainer on one node"), then `kubectl label node N drainer.dev/agent=disabled`.
// No gate is left without a keeper: with nothing on the host the stopping agent drops its gate and a drain goes
// on at once; with a server left the gate holds, `drainer doctor` names it and `drainer release --force` opens
// it. `drainer.dev/agent-` brings the agent back, and the suite's own overlay is applied again for later files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { drainerCli, printed } from './support/cli.ts';
import { Cluster, gateName } from './support/cluster.ts';
import { figure, seconds, useReal, type Real } from './support/context.ts';
import { reapply } from './support/install.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();
const AGENT = 'drainer.dev/agent';

/** The runbook's agent-affinity patch (docs/operations.md, `<!-- agent-affinity-patch -->`). */
const AGENT_AFFINITY = {
  op: 'add',
  path: '/spec/template/spec/affinity',
  value: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: AGENT, operator: 'NotIn', values: ['disabled'] }] }],
      },
    },
  },
};

async function takeAgentOff(r: Real): Promise<number> {
  const t0 = Date.now();
  await r.k.ok(['label', 'node', r.env.node, `${AGENT}=disabled`, '--overwrite']);
  await waitFor(async () => ((await r.cluster.agents()).length === 0 ? true : undefined), {
    what: `the agent off ${r.env.node}`,
    timeoutMs: 180_000,
  });
  return Date.now() - t0;
}

async function putAgentBack(r: Real): Promise<void> {
  await r.cluster.uncordon();
  await r.k.ok(['label', 'node', r.env.node, `${AGENT}-`]);
  await waitFor(async () => await r.cluster.readyAgent(), {
    what: 'the agent back and Ready',
    timeoutMs: 180_000,
  });
  await r.cluster.waitGateHeld();
}

describe('an agent taken off its node by drainer.dev/agent=disabled', () => {
  beforeAll(async () => {
    await reapply(real(), { daemonSetOps: [AGENT_AFFINITY] });
  });
  afterAll(async () => {
    const r = real();
    await r.k.run(['label', 'node', r.env.node, `${AGENT}-`]);
    await reapply(r);
  });

  it('drops its gate when nothing is left on the host: a drain goes on at once', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    figure(ctx, 'label to agent pod gone', `${seconds(await takeAgentOff(r))} s`);
    await waitFor(
      async () => {
        const g = await r.cluster.gate();
        return g.pod || g.pdb ? undefined : true;
      },
      { what: `the drain gate of ${r.env.node} dropped`, timeoutMs: 60_000 },
    );

    const drain = r.cluster.drain('--timeout=120s');
    const done = await drain.done;
    expect(done.code, done.stderr).toBe(0);
    figure(
      ctx,
      'kubectl drain with the agent off, empty host',
      `${seconds(done.endedAt - drain.startedAt)} s`,
    );

    await putAgentBack(r);
  });

  it('keeps the gate while a server is left: doctor names it, release --force opens it', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    await r.nova.boot('agent-off', 1);
    await takeAgentOff(r);
    // the stopping agent keeps the gate: nobody moves the server, and a drain must not pass it unnoticed
    const drain = r.cluster.drain('--timeout=300s');
    const gate = await r.cluster.waitGateHeld();
    expect(Cluster.held(gate)).toBe(true);

    const doctor = await drainerCli(r.env, ['doctor']);
    expect(doctor.code, printed(doctor)).toBe(3);
    expect(doctor.stdout).toMatch(/vms-without-agent/);
    expect(doctor.stdout).toContain(gateName(r.env.node));
    expect(drain.exited()).toBe(false);

    const releasedAt = Date.now();
    const release = await drainerCli(r.env, ['release', '--node', r.env.node, '--force']);
    expect(release.code, printed(release)).toBe(0);
    const done = await drain.done;
    expect(done.code, done.stderr).toBe(0);
    figure(ctx, 'release to the held drain returned', `${seconds(done.endedAt - releasedAt)} s`);
    expect(await r.k.get(['pdb', '-n', NAMESPACE, gateName(r.env.node)])).toBeUndefined();

    await putAgentBack(r);
  });
});
