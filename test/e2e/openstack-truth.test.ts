// Stories of issue 23 (Nova side) on the full stack: drainer never claims a server moved that it
// did not see move, takes time from Nova's own clock, never sends a migration twice after a lost
// answer, and says plainly when the cloud rejects its credentials.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../cli/harness.ts';
import { EVACUATING_TAINT } from '../../src/core/record/record.ts';
import { startDaemon } from './daemon-run.ts';
import { smallWorld } from './scenario.ts';
import { finished, nodeEvents, startStack, until, type Stack } from './stack.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Starts the stack on a scenario, an agent on node-a, cordons it and waits for the end. */
async function cordonAndWait(scenario: object, config?: Record<string, unknown>) {
  stack = await startStack({ scenario, ...(config ? { config } : {}) });
  const agent = stack.startAgent('node-a');
  await until('agent ready', () => agent.agent.ready().ready);
  await stack.cordon('node-a');
  return { s: stack, os: stack.sandbox.openstack.state, rec: await finished(stack, 'node-a') };
}

describe('issue 23, Nova side (full stack)', () => {
  it('a policy that hides the host: refused before the first change, naming the admin rights', async () => {
    const { s, os, rec } = await cordonAndWait(smallWorld({ servers: 3, faults: { hideHost: true } }));

    expect(rec.phase).toBe('Failed');
    expect(rec.failureReason).toBe('EvacuationBlocked');
    expect(rec.lastError).toMatch(/OS-EXT-SRV-ATTR:host.*admin role/);
    expect(rec.outcomes ?? []).toEqual([]);
    expect(os.service('node-a')?.status).toBe('enabled');
    expect(os.servers().every((v) => os.migrations(v.id).length === 0)).toBe(true);
    expect((await s.node('node-a')).spec?.taints ?? []).not.toContainEqual(
      expect.objectContaining({ key: EVACUATING_TAINT.key }),
    );
    expect((await nodeEvents(s, 'node-a', 'EvacuationBlocked')).join()).toMatch(/admin role/);
  });

  it('one server whose clock runs 10 minutes fast: finished migrations are still seen at once', async () => {
    const world = smallWorld({ servers: 3, faults: { clockAheadSeconds: { elsewhere: 600 } } });
    const servers = [...world.openstack.servers, { name: 'elsewhere', project: 'alpha', host: 'node-b' }];
    // 3 × 10 s at 20× is under 2 s; the old window missed every change until the 600 s deadline
    const { os, rec } = await cordonAndWait(
      { ...world, openstack: { ...world.openstack, servers } },
      { nova: { pollInterval: 0.05, retryBackoff: 0.1, migrationTimeout: 600 } },
    );

    expect(rec.lastError).toBeUndefined();
    expect(rec.phase).toBe('Evacuated');
    expect(os.serversOnHost('node-a')).toEqual([]);
  });

  it('Nova applied os-migrateLive but the answer was dropped: no second migration', async () => {
    const { s, os, rec } = await cordonAndWait(
      smallWorld({ servers: 2, faults: { dropActionAnswers: ['vm-1'] } }),
    );

    expect(rec.phase).toBe('Evacuated');
    const vm1 = os.servers().find((v) => v.name === 'vm-1')!;
    expect(os.migrations(vm1.id)).toHaveLength(1);
    expect(os.migrateCalls(vm1.id)).toBe(1);
    expect(s.sandbox.openstack.requestLog.some((r) => r.status === 0)).toBe(true);
  });

  it("Nova's fault message reaches the MigrationFailed Event and drainer status", async () => {
    const fault = 'No valid host was found. There are not enough hosts available.';
    const { s, rec } = await cordonAndWait(
      smallWorld({ servers: 2, faults: { errorMigrations: { 'vm-1': fault } } }),
    );

    expect(rec.phase).toBe('Failed');
    expect(rec.lastError).toContain(`Nova: ${fault} (migration`);
    const failed = await nodeEvents(s, 'node-a', 'MigrationFailed');
    expect(failed).toEqual([
      expect.stringMatching(
        /^nova: vm-1 \(.*\): server went to ERROR during live-migrate; Nova: No valid host was found/,
      ),
    ]);
    const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-status-')), 'kubeconfig');
    writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
    const status = await cli({ env: { KUBECONFIG: kubeconfig } })('status', '-o', 'json');
    const { nodes } = JSON.parse(status.stdout) as { nodes: { node: string; lastError?: string }[] };
    expect(nodes.find((n) => n.node === 'node-a')?.lastError).toContain(`Nova: ${fault}`);
  });

  it('a wrong password: the daemon is not ready, says why in one line, and a cordon fails as CloudAuthFailed', async () => {
    const password = 'not-the-password';
    stack = await startStack({
      scenario: smallWorld({ servers: 2 }),
      config: { openstack: { auth: { password } } },
    });
    const s = stack;
    s.expect4xx(401, 'the story gives a wrong password on purpose: Keystone answers 401');
    const daemon = await startDaemon(s, 'node-a');
    try {
      const readyz = await until('the cloud check to fail', async () => {
        const r = await daemon.get('/readyz');
        return r.text.includes('cloud authentication failed') ? r : undefined;
      });
      const { ready, reasons } = JSON.parse(readyz.text) as { ready: boolean; reasons: string[] };

      expect(readyz.status).toBe(503);
      expect(ready).toBe(false);
      expect(reasons.every((r) => !r.includes('\n'))).toBe(true);
      expect(reasons.filter((r) => r.startsWith('nova:'))).toEqual([
        expect.stringMatching(
          /^nova: cloud authentication failed: keystone POST \/v3\/auth\/tokens → 401: credentials rejected/,
        ),
      ]);
      expect(readyz.text).not.toContain(password);
      expect((await daemon.get('/metrics')).text).toMatch(/drainer_cloud_auth_ok\{plugin="nova"\} 0/);

      await s.cordon('node-a');
      const rec = await finished(s, 'node-a');

      expect(rec.phase).toBe('Failed');
      expect(rec.failureReason).toBe('CloudAuthFailed');
      expect(await nodeEvents(s, 'node-a', 'CloudAuthFailed')).toHaveLength(1);
      expect(await nodeEvents(s, 'node-a', 'InsufficientCapacity')).toEqual([]);
      expect(s.sandbox.openstack.state.service('node-a')?.status).toBe('enabled');
    } finally {
      await daemon.stop();
    }
  });
});
