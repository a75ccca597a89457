// Story: an operator runs `drainer plan` for each node of the default sandbox before touching it,
// then evacuates each node for real: the plan's verdict and exit code are what the evacuation does.
// node-1 and node-2 would succeed (0); node-3 is refused for capacity (3); node-4 holds the VMI
// vm-legacy that cannot migrate (3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PreflightReport } from '../../src/core/preflight/preflight.ts';
import { startStack, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';

describe('drainer plan is the dry run of the evacuation (default scenario)', () => {
  let stack: Stack;
  let run: ReturnType<typeof stackCli>;
  const plans = new Map<string, { code: number; report: PreflightReport; table: string }>();

  beforeAll(async () => {
    stack = await startStack({ scale: 40 });
    const sb = stack.sandbox.drainerConfig;
    run = stackCli(stack, {
      logLevel: 'warn',
      nova: { ...(sb.nova as object), pollInterval: 0.05, retryBackoff: 0.1 },
      kubevirt: { ...(sb.kubevirt as object), pollInterval: 0.05 },
      drain: { evictionRetryInterval: 0.1, timeout: 30 },
    });
    // every plan before any evacuation: the cluster as the operator found it
    for (const node of ['node-1', 'node-2', 'node-3', 'node-4']) {
      const json = await run('plan', '--node', node, '-o', 'json');
      const table = await run('plan', '--node', node);
      expect(table.code, node).toBe(json.code);
      plans.set(node, {
        code: json.code,
        report: JSON.parse(json.stdout) as PreflightReport,
        table: table.stdout,
      });
    }
  }, 60_000);
  afterAll(async () => stack?.close());

  it('plans node-1 and node-2 as succeeding (0), with the pods, the VMIs and the fleet slot', () => {
    for (const node of ['node-1', 'node-2']) {
      const p = plans.get(node);
      expect(p?.report.reasons, node).toEqual([]);
      expect(p?.report.verdict, node).toBe('would-succeed');
      expect(p?.code, node).toBe(0);
      expect(p?.report.plans.map((x) => x.plugin).sort()).toEqual(['kubevirt', 'nova']);
      expect(p?.report.pods?.evict, node).toBeGreaterThan(0);
      expect(p?.report.fleet?.position).toBe(0);
      expect(p?.table).toMatch(/^fleet: a fleet slot is free \(0 of 1 taken\): would start now$/m);
      expect(p?.table).toMatch(/^verdict: would succeed$/m);
    }
  });

  it("names each VMI's way out and why (the WHY column), as for Nova servers", () => {
    const row = (node: string, vmi: string) =>
      plans
        .get(node)
        ?.table.split('\n')
        .find((l) => /^\s*kubevirt\s/.test(l) && l.includes(`vms/${vmi} `));
    expect(row('node-1', 'vm-web-1')).toMatch(
      /live-migrate\s+evictionStrategy LiveMigrate: KubeVirt live-migrates it$/,
    );
    expect(row('node-1', 'vm-web-2')).toMatch(
      /live-migrate\s+evictionStrategy LiveMigrate \(the KubeVirt CR's\): KubeVirt live-migrates it$/,
    );
    expect(row('node-2', 'vm-db')).toMatch(
      /live-migrate\s+evictionStrategy LiveMigrateIfPossible: KubeVirt live-migrates it$/,
    );
    expect(row('node-2', 'vm-batch')).toMatch(
      /shutdown\s+evictionStrategy None: left to the pod drain, which stops it$/,
    );
  });

  it('plans node-3 as refused for capacity (3), naming what the largest host can take', () => {
    const p = plans.get('node-3');
    expect(p?.code).toBe(3);
    expect(p?.report.verdict).toBe('refused');
    // gamma-db-1 asks 96 GiB of RAM: the message says what the other hosts take, not its size again
    expect(p?.report.reasons.join('\n')).toMatch(
      /InsufficientCapacity: nova: .*gamma-db-1 \(24 vCPU, 96 GiB RAM\) is larger than any other host takes for one workload \(at most 16 vCPU, 64 GiB RAM\)/,
    );
    expect(p?.table).toMatch(/^verdict: would be REFUSED$/m);
  });

  it('plans node-4 as blocked by the VMI vm-legacy (3)', () => {
    const p = plans.get('node-4');
    expect(p?.code).toBe(3);
    expect(p?.report.reasons).toContainEqual(
      expect.stringMatching(/^kubevirt: vms\/vm-legacy cannot move \(.*DisksNotLiveMigratable.*\)$/),
    );
    expect(p?.table).toMatch(/^ {2}- kubevirt: vms\/vm-legacy cannot move/m);
  });

  it('names a node the cluster does not have: one line, exit 2', async () => {
    const r = await run('plan', '--node', 'node-zz');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: node node-zz does not exist in the cluster\n');
  });

  it('without --node says the name it tried is the hostname, and how to name the node', async () => {
    const r = await run('plan');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "error: node this-host does not exist in the cluster (this-host is this machine's hostname: name the node with --node, or set NODE_NAME)\n",
    );
  });

  it('the evacuations confirm each verdict', async () => {
    // refused before the first change; uncordoned again so the others have room to move into
    const three = await run('run-once', '--node', 'node-3', '--cordon');
    expect(three.code).not.toBe(0);
    expect(await stack.record('node-3')).toMatchObject({
      phase: 'Failed',
      failureReason: 'InsufficientCapacity',
    });
    await stack.cordon('node-3', false);
    const four = await run('run-once', '--node', 'node-4', '--cordon');
    expect(four.code).not.toBe(0);
    const rec = await stack.record('node-4');
    expect(rec?.phase).toBe('Failed');
    expect(rec?.lastError).toMatch(/vm-legacy/);
    // named once, not "vms/vm-legacy cannot migrate (…) (vms/vm-legacy: …)"
    expect(rec?.lastError?.match(/vm-legacy/g)).toHaveLength(1);
    expect((await run('restore', '--node', 'node-4')).code).toBe(0);
    await stack.cordon('node-4', false);
    for (const node of ['node-1', 'node-2']) {
      const r = await run('run-once', '--node', node, '--cordon');
      expect(r.stdout, node).toMatch(new RegExp(`node ${node}: Evacuated`));
      expect(r.code, node).toBe(0);
      expect((await run('restore', '--node', node)).code, node).toBe(0);
      await stack.cordon(node, false);
    }
  }, 120_000);

  it('the plan changed nothing: no record and no taint was left by planning', async () => {
    const fresh = await startStack({ scale: 40 });
    try {
      const again = stackCli(fresh);
      expect((await again('plan', '--node', 'node-4')).code).toBe(3);
      const node = await fresh.node('node-4');
      expect(await fresh.record('node-4')).toBeUndefined();
      expect(node.spec?.taints ?? []).toEqual([]);
      expect(node.spec?.unschedulable).toBeFalsy();
      expect(fresh.sandbox.openstack.state.service('node-4')?.status).toBe('enabled');
    } finally {
      await fresh.close();
    }
  }, 60_000);
});
