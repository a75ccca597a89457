// Story (issue 28 item 4): an operator runs `drainer doctor` against the cluster and the cloud.
// On a healthy stack it finds nothing (exit 0). Then each kind of stranded state is made the way
// it happens in life, and doctor names every one with its evidence and fix (exit 3): a service
// left disabled by a Node deleted mid-maintenance, the gate objects of that deleted Node, a record
// whose agent stopped, a record with no gate, a NodeMaintenance nobody took, a fleet slot held by
// an agent that is gone. It could not look: exit 1; bad input: exit 2.
import { gateName } from '../../src/kube/gate.ts';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { microTime } from '../../src/core/fleet/budget.ts';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import type { Violation } from '../../src/invariants/violation.ts';
import type { KubeLease } from '../../src/kube/lease.ts';
import type { KubePod } from '../../src/kube/types.ts';
import { NM_PATH, nodeMaintenance, smallWorld } from './scenario.ts';
import { finished, startStack, until, type RunningAgent, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';

const MERGE = 'application/merge-patch+json';

describe('drainer doctor (full stack)', () => {
  let stack: Stack | undefined;
  let agentA: RunningAgent | undefined;
  afterAll(async () => stack?.close());

  const doctor = async (s: Stack, ...args: string[]) => stackCli(s)('doctor', ...args);
  const findings = async (s: Stack) => {
    const r = await doctor(s, '-o', 'json');
    return { code: r.code, found: (JSON.parse(r.stdout) as { findings: Violation[] }).findings };
  };

  it('finds nothing on a healthy stack: exit 0', async () => {
    const s = (stack = await startStack({ scenario: smallWorld({ servers: 2, migrationSeconds: 4 }) }));
    const agent = (agentA = s.startAgent('node-a'));
    await until('agent ready', () => agent.agent.ready().ready);
    const gate = () =>
      s.k.request<KubePod>({ path: `/api/v1/namespaces/drainer/pods/${gateName('node-a')}` });
    await until(
      'gate pod running',
      async () => (await gate().catch(() => undefined))?.status?.phase === 'Running',
    );

    const r = await doctor(s);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('no finding: every promise holds');
    expect(r.code).toBe(0);
  });

  it('names each stranded state with its evidence and fix: exit 3', async () => {
    const s = stack!;
    // every one of these is made on purpose: the story's own end-of-story check leaves them be
    for (const id of ['stranded-service', 'leftover-gate', 'gate-missing'] as const)
      s.expectBroken(id, 'doctor story: a stranded state made on purpose');
    // node-b's stranded record says Evacuating beside node-c's slot Lease: the budget counts both
    s.expectBroken(
      'budget-exceeded',
      "doctor story: node-b's stranded Evacuating record beside node-c's slot",
    );

    // node-a is evacuated, its agent stops, and its Node is deleted (a machine replaced mid-maintenance)
    await s.cordon('node-a');
    expect((await finished(s, 'node-a')).phase).toBe('Evacuated');
    await agentA?.stop();
    await s.k.request({ method: 'DELETE', path: '/api/v1/nodes/node-a' });
    // node-b: a record nobody acts on (no agent, no gate), and a NodeMaintenance nobody took
    const rec = { phase: 'Evacuating', trigger: 'cordon', since: new Date().toISOString() };
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-b',
      contentType: MERGE,
      body: { metadata: { annotations: { [STATE_ANNOTATION]: JSON.stringify(rec) } } },
    });
    await s.k.request({ method: 'POST', path: NM_PATH, body: nodeMaintenance('nm-b', 'node-b') });
    // the fleet slot taken by an agent that is gone (its Lease not yet expired)
    const SLOT = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-evacuation-0';
    const slot = await s.k.request<KubeLease>({ path: SLOT });
    await s.k.request({
      method: 'PUT',
      path: SLOT,
      body: {
        ...slot,
        spec: {
          ...slot.spec,
          holderIdentity: 'node-c/agent-x/uid-1',
          leaseDurationSeconds: 600,
          renewTime: microTime(new Date()),
        },
      },
    });

    const { code, found } = await findings(s);
    const of = (id: string) => found.filter((f) => f.id === id).map((f) => f.object);
    expect(of('stranded-service')).toEqual(['nova-compute/node-a']);
    expect(of('leftover-gate')).toEqual([`poddisruptionbudget/drainer/${gateName('node-a')}`]);
    expect(of('record-without-agent')).toEqual(['node/node-b']);
    expect(of('gate-missing')).toEqual([`pod/drainer/${gateName('node-b')}`]);
    // node-b has no agent to take it up: the operator's to act on
    expect(of('maintenance-without-agent')).toEqual(['nodemaintenance/nm-b']);
    expect(of('lease-held-by-dead-agent')).toEqual(['lease/drainer/drainer-evacuation-0']);
    for (const f of found) {
      expect(f.evidence, f.id).not.toBe('');
      expect(f.fix, f.id).not.toBe('');
    }
    expect(code).toBe(3);

    // the table says the same, one block per finding
    const table = await doctor(s);
    expect(table.code).toBe(3);
    expect(table.stdout).toContain('FINDING stranded-service: nova-compute/node-a');
    expect(table.stdout).toMatch(/evidence: disabled with drainer's reason "drainer:/);
    expect(table.stdout).toContain(`${found.length} finding(s)`);
  });

  it('could not look (the API server does not answer): exit 1; bad input: exit 2', async () => {
    const s = stack!;
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-doctor-'));
    const dead = path.join(dir, 'kubeconfig');
    writeFileSync(dead, s.sandbox.kube.kubeconfig().replace(/server: \S+/, 'server: http://127.0.0.1:9'));
    const unreachable = await stackCli(s, { kubeconfig: dead })('doctor');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^error: /);

    const noCloud = await stackCli(s, { openstack: { auth: { authUrl: 'http://127.0.0.1:9/v3' } } })(
      'doctor',
    );
    expect(noCloud.code).toBe(2);
    expect(noCloud.stderr).toMatch(/openstack\.auth: .* is missing: drainer doctor cannot look at Nova/);
  });
});
