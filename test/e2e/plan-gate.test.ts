// Story: before draining node-a an operator asks `drainer plan` whether its drain gate would make a
// drain wait. With no agent on the node yet there is none (and plan creates none: it only reads);
// once the agent runs, the gate pod and its PDB hold drains; with drainGate.enabled false, none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PreflightReport } from '../../src/core/preflight/preflight.ts';
import { gateName } from '../../src/kube/gate.ts';
import type { KubePod } from '../../src/kube/types.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';

const GATE = gateName('node-a');
const POD = `/api/v1/namespaces/drainer/pods/${GATE}`;
const PDB = `/apis/policy/v1/namespaces/drainer/poddisruptionbudgets/${GATE}`;

describe('drainer plan shows the drain gate', () => {
  let stack: Stack;
  let run: ReturnType<typeof stackCli>;
  const exists = (path: string) =>
    stack.k.request({ path }).then(
      () => true,
      () => false,
    );
  const plan = async (cli = run) => {
    const json = await cli('plan', '--node', 'node-a', '-o', 'json');
    const table = await cli('plan', '--node', 'node-a');
    return { code: json.code, report: JSON.parse(json.stdout) as PreflightReport, table: table.stdout };
  };

  beforeAll(async () => {
    stack = await startStack({ scenario: smallWorld() });
    run = stackCli(stack, { logLevel: 'warn' });
  }, 60_000);
  afterAll(async () => stack?.close());

  it('says there is none before an agent ran on the node, and creates none', async () => {
    const p = await plan();
    expect(p.code).toBe(0);
    expect(p.report.gate?.state).toBe('not-held');
    expect(p.table).toMatch(
      new RegExp(
        `^note: drain gate: none \\(drainer/${GATE}: its pod and PodDisruptionBudget not created yet; `,
        'm',
      ),
    );
    expect(await exists(POD)).toBe(false);
    expect(await exists(PDB)).toBe(false);
  });

  it('says it is held once the agent keeps its gate pod Running', async () => {
    const agent = stack.startAgent('node-a');
    const pod = () => stack.k.request<KubePod>({ path: POD }).catch(() => undefined);
    await until('gate pod running', async () => (await pod())?.status?.phase === 'Running');
    const p = await plan();
    expect(p.code).toBe(0);
    expect(p.report.gate).toEqual({
      state: 'held',
      note: `held (drainer/${GATE}): drains wait until the VMs have left`,
    });
    expect(p.report.notes).toContain(
      `drain gate: held (drainer/${GATE}): drains wait until the VMs have left`,
    );
    expect(p.table).toMatch(
      new RegExp(`^note: drain gate: held \\(drainer/${GATE}\\): drains wait until the VMs have left$`, 'm'),
    );
    await agent.stop();
  });

  it('says none when drainGate.enabled is false, whatever is left in the cluster', async () => {
    const p = await plan(stackCli(stack, { logLevel: 'warn', drainGate: { enabled: false } }));
    expect(p.code).toBe(0);
    expect(p.report.gate?.state).toBe('off');
    expect(p.table).toMatch(
      /^note: drain gate: none \(drainGate\.enabled false\): drains of this node are not held$/m,
    );
  });
});
