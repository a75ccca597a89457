// Stories of issue 31 on the full stack: each server its own way out (Nova metadata
// drainer.dev:maintenance), the node's migration mode, and servers in ERROR under nova.onError.
// Each asserts Nova's state as the sandbox holds it and the node's record (the drain gate is released
// only when the record says Evacuated).
import { afterEach, describe, expect, it } from 'vitest';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import { nova, token } from '../sandbox/openstack/client.ts';
import { smallWorld } from './scenario.ts';
import type { PreflightReport } from '../../src/core/preflight/preflight.ts';
import { gateName } from '../../src/kube/gate.ts';
import type { KubePod } from '../../src/kube/types.ts';
import { finished, nodeEvents, startStack, until, type Stack } from './stack.ts';
import { stackCli } from './stack-cli.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

type ServerSpec = { name: string; state?: string; metadata?: Record<string, string> };

/** node-a holds these servers (project alpha), node-b takes them. */
function world(servers: ServerSpec[]) {
  const base = smallWorld({ servers: 0 });
  return {
    ...base,
    openstack: {
      ...base.openstack,
      servers: servers.map((s) => ({ project: 'alpha', host: 'node-a', ...s })),
    },
  };
}

async function start(
  servers: ServerSpec[],
  config: Record<string, unknown> = {},
  nodeAnnotations: Record<string, string> = {},
) {
  stack = await startStack({ scenario: world(servers), config });
  const s = stack;
  if (Object.keys(nodeAnnotations).length)
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: nodeAnnotations } },
    });
  const agent = s.startAgent('node-a');
  await until('agent ready', () => agent.agent.ready().ready);
  const os = s.sandbox.openstack.state;
  const byName = (name: string) => os.servers().find((x) => x.name === name)!;
  return { s, os, byName };
}

const way = (w: string) => ({ [MAINTENANCE_KEY]: w });

describe('each server its own way out (full stack)', () => {
  it('cold: the server moves stopped and runs again on the new host; the default one live-migrates', async () => {
    const { s, os, byName } = await start([{ name: 'vm-cold', metadata: way('cold') }, { name: 'vm-live' }]);

    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    const cold = byName('vm-cold');
    expect([cold.host, cold.status]).toEqual(['node-b', 'ACTIVE']);
    expect(os.migrations(cold.id).map((m) => [m.type, m.status])).toEqual([['migration', 'confirmed']]);
    expect(os.migrations(byName('vm-live').id).map((m) => m.type)).toEqual(['live-migration']);
  });

  it('stop on a declared reboot: stopped on the host, the node Evacuated, and started again on restore', async () => {
    const { s, byName } = await start(
      [{ name: 'vm-stop', metadata: way('stop') }, { name: 'vm-live' }],
      { resyncInterval: 1 },
      {
        'drainer.dev/reboot': 'true',
      },
    );
    // the operator declared a reboot: the stopped server stays on the host and the gate opens anyway
    s.expectBroken('gate-disrupted-while-occupied', 'a declared reboot keeps vm-stop on the host on purpose');

    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    expect([byName('vm-stop').host, byName('vm-stop').status]).toEqual(['node-a', 'SHUTOFF']);
    expect(byName('vm-live').host).toBe('node-b');
    expect(JSON.stringify(rec.outcomes)).toMatch(
      /vm-stop \(skipped: stopped on the host for the declared reboot/,
    );
    // resyncs list the host again: the stopped server is no stray, the node stays Evacuated
    await new Promise((r) => setTimeout(r, 2500));
    expect((await s.record('node-a'))?.phase).toBe('Evacuated');
    expect(await nodeEvents(s, 'node-a', 'DrainGateHeld')).not.toContainEqual(
      expect.stringMatching(/wait again/),
    );

    await s.cordon('node-a', false);
    await until('restored', async () => (await s.record('node-a')) === undefined);

    expect([byName('vm-stop').host, byName('vm-stop').status]).toEqual(['node-a', 'ACTIVE']);
  });

  it('stop without a declared reboot: refused before the first change (a stopped server counts as still on the host)', async () => {
    const { s, os, byName } = await start([{ name: 'vm-stop', metadata: way('stop') }, { name: 'vm-live' }]);

    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec).toMatchObject({ phase: 'Failed', failureReason: 'EvacuationBlocked' });
    expect(rec.lastError).toMatch(
      /vm-stop \(way out "stop" keeps the server on the host.*drainer\.dev\/reboot=true/,
    );
    expect(os.service('node-a')?.status).toBe('enabled');
    expect(byName('vm-stop').status).toBe('ACTIVE');
    expect(os.migrateCalls(byName('vm-live').id)).toBe(0);
  });

  it('stop without a declared reboot and drain.requirePluginsSucceeded false: not refused; the server keeps running, the node Evacuated, the gate held', async () => {
    const { s, os, byName } = await start([{ name: 'vm-stop', metadata: way('stop') }, { name: 'vm-live' }], {
      drain: { requirePluginsSucceeded: false },
    });

    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    expect(os.service('node-a')?.status).toBe('disabled');
    expect([byName('vm-stop').host, byName('vm-stop').status]).toEqual(['node-a', 'ACTIVE']);
    expect(byName('vm-live').host).toBe('node-b');
    expect(JSON.stringify(rec.outcomes)).toMatch(
      /vm-stop \(blocked: way out \\"stop\\" keeps the server on the host/,
    );
    expect(await nodeEvents(s, 'node-a', 'DrainGateHeld')).toContainEqual(
      expect.stringMatching(/not every virtual machine moved \(drain.requirePluginsSucceeded is false\)/),
    );
  });

  it('notify: the owner is asked, and after nova.notifyTimeout the server takes the default way (live)', async () => {
    const { s, os, byName } = await start([{ name: 'vm-ask', metadata: way('notify') }], {
      nova: { notifyTimeout: 1 },
    });
    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    // asked first (the clock kept in the record), moved the default way after the timeout
    const entry = (
      rec.plugins.nova?.migrations as Record<string, { notifiedAt?: string; startedAt: string }>
    )[byName('vm-ask').id];
    expect(Date.parse(entry!.startedAt) - Date.parse(entry!.notifiedAt!)).toBeGreaterThanOrEqual(1000);
    expect(byName('vm-ask').host).toBe('node-b');
    expect(os.migrations(byName('vm-ask').id).map((m) => m.type)).toEqual(['live-migration']);
    expect(await nodeEvents(s, 'node-a', 'MoveRequested')).toEqual([
      expect.stringMatching(/vm-ask .*of project alpha.*asked to move it/),
    ]);
  });

  it('an invalid value is refused before the first change, naming the server and the value', async () => {
    const { s, os, byName } = await start([
      { name: 'vm-typo', metadata: way('teleport') },
      { name: 'vm-live' },
    ]);

    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec).toMatchObject({ phase: 'Failed', failureReason: 'EvacuationBlocked' });
    expect(rec.lastError).toMatch(
      /vm-typo .*drainer\.dev:maintenance="teleport" is not one of live, cold, stop, notify/,
    );
    expect(os.service('node-a')?.status).toBe('enabled');
    expect(os.servers().every((x) => os.migrateCalls(x.id) === 0)).toBe(true);
    expect(byName('vm-typo').host).toBe('node-a');
  });
});

describe('drainer plan shows each way out and why (full stack)', () => {
  it('names the way and its reason per server, and refuses the node for a typo before anything changes', async () => {
    stack = await startStack({
      scenario: world([
        { name: 'vm-live' },
        { name: 'vm-cold', metadata: way('cold') },
        { name: 'vm-ask', metadata: way('notify') },
        { name: 'vm-typo', metadata: way('Live') },
      ]),
    });
    const run = stackCli(stack, {
      logLevel: 'warn',
      nova: { ...(stack.sandbox.drainerConfig.nova as object), notifyTimeout: 600 },
    });

    const json = await run('plan', '--node', 'node-a', '-o', 'json');
    const table = await run('plan', '--node', 'node-a');

    const report = JSON.parse(json.stdout) as PreflightReport;
    const lines = Object.fromEntries(report.plans[0]!.workloads.map((w) => [w.name, [w.action, w.why]]));
    expect(lines).toEqual({
      'vm-live': ['live-migrate', 'default'],
      'vm-cold': [
        'cold-migrate',
        'metadata drainer.dev:maintenance=cold: Nova stops it, moves it and starts it on the new host; drainer then confirms the resize, which frees the old host',
      ],
      'vm-ask': [
        'notify',
        'metadata drainer.dev:maintenance=notify: its owner is asked to move it; after nova.notifyTimeout (600s) it takes the default way (live-migrate)',
      ],
      'vm-typo': ['none', 'metadata drainer.dev:maintenance=Live'],
    });
    expect([json.code, report.verdict]).toEqual([3, 'refused']);
    expect(report.reasons.join('\n')).toMatch(
      /EvacuationBlocked: nova: 1 server\(s\) name a way out drainer does not know: vm-typo \(.*\): metadata drainer.dev:maintenance="Live" is not one of live, cold, stop, notify/,
    );
    // the verdict names the typo once, as the agent's refusal does (not again as 'vm-typo cannot move')
    expect(report.reasons.filter((r) => r.includes('vm-typo'))).toHaveLength(1);
    expect(table.stdout.slice(table.stdout.indexOf('verdict:')).match(/vm-typo/g)).toHaveLength(1);
    expect(table.stdout).toMatch(
      /^nova\s+vm-cold\s+alpha\s+ACTIVE\s+cold-migrate\s+metadata drainer.dev:maintenance=cold: Nova stops it/m,
    );
    expect(stack.sandbox.openstack.state.service('node-a')?.status).toBe('enabled');
  });
});

describe('the memory left to move (full stack)', () => {
  it('drainer status shows the memory still on the node and an ETA from the rate measured so far', async () => {
    // three 2 GiB servers, 40 simulated seconds each (2 s real): one at a time
    stack = await startStack({
      scenario: {
        ...world([]),
        openstack: {
          ...world([]).openstack,
          migrationSeconds: 40,
          servers: ['vm-1', 'vm-2', 'vm-3'].map((name) => ({
            name,
            project: 'alpha',
            host: 'node-a',
            ramMb: 2048,
          })),
        },
      },
      config: { nova: { submitAhead: 0 } },
    });
    const s = stack;
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await s.cordon('node-a');
    const mid = await until('one server moved', async () => {
      const p = (await s.record('node-a'))?.progress?.nova;
      return p && p.moved >= 1 && p.moved < 3 ? p : undefined;
    });
    const status = await stackCli(s, { logLevel: 'warn' })('status', '-o', 'wide');
    const table = await stackCli(s, { logLevel: 'warn' })('status');

    expect(mid.memoryLeftBytes).toBe((3 - mid.moved) * 2 * 1024 ** 3);
    expect(mid.bytesPerSecond).toBeGreaterThan(0);
    expect(status.stdout).toMatch(
      new RegExp(`nova ${mid.moved}/3, ${(3 - mid.moved) * 2} GiB left, ETA ~\\d+s`),
    );
    // the table, narrower, keeps the ETA
    expect(table.stdout).toMatch(/nova [12]\/3 ETA ~\d+s/);
    expect((await finished(s, 'node-a')).progress?.nova?.memoryLeftBytes).toBe(0);
  });
});

describe('drainer plan for a node in migration-mode manual (full stack)', () => {
  it('lists every server as moved by someone else, and says the evacuation waits for the host to be empty', async () => {
    const { s } = await start([{ name: 'vm-1' }], {}, { 'drainer.dev/migration-mode': 'manual' });
    const run = stackCli(s, { logLevel: 'warn' });

    const json = await run('plan', '--node', 'node-a', '-o', 'json');

    const report = JSON.parse(json.stdout) as PreflightReport;
    expect(report.plans[0]?.workloads.map((w) => [w.name, w.action, w.why])).toEqual([
      [
        'vm-1',
        'external',
        'node node-a drainer.dev/migration-mode=manual: moved by someone else; the drain waits until the host is empty',
      ],
    ]);
    expect(report.notes).toContainEqual(
      expect.stringMatching(/migration-mode=manual: drainer disables the compute service and moves nothing/),
    );
    expect(json.code).toBe(0);
  });
});

describe('the node migration mode (full stack)', () => {
  it('manual: nova-compute disabled, nothing moved by drainer, Evacuated only once the test has moved the servers', async () => {
    const { s, os } = await start(
      [{ name: 'vm-1' }, { name: 'vm-2' }],
      {},
      {
        'drainer.dev/migration-mode': 'manual',
      },
    );

    await s.cordon('node-a');
    await until('service disabled', () => os.service('node-a')?.status === 'disabled');
    await new Promise((r) => setTimeout(r, 500));

    expect((await s.record('node-a'))?.phase).toBe('Evacuating');
    expect(os.servers().every((x) => os.migrateCalls(x.id) === 0)).toBe(true);
    // the drain gate holds every Eviction-API drain meanwhile
    const gatePod = () =>
      s.k
        .request<KubePod>({ path: `/api/v1/namespaces/drainer/pods/${gateName('node-a')}` })
        .catch(() => undefined);
    expect((await gatePod())?.status?.phase).toBe('Running');

    // the operator moves them with their own tools
    const t = await token(s.sandbox.openstack);
    for (const x of os.servers())
      await nova(s.sandbox.openstack, 'POST', `/servers/${x.id}/action`, {
        token: t,
        version: '2.93',
        body: { 'os-migrateLive': { host: null, block_migration: 'auto' } },
      });
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    expect(os.servers().map((x) => x.host)).toEqual(['node-b', 'node-b']);
    expect(os.servers().every((x) => os.migrateCalls(x.id) === 1)).toBe(true); // the test's own calls
    await until('gate released', async () => (await gatePod()) === undefined);
  });

  it('skip: the node is never evacuated, like drainer.dev/ignore', async () => {
    const { s, os } = await start([{ name: 'vm-1' }], {}, { 'drainer.dev/migration-mode': 'skip' });

    await s.cordon('node-a');
    const said = await until(
      'EvacuationBlocked',
      async () => (await nodeEvents(s, 'node-a', 'EvacuationBlocked'))[0],
    );

    expect(said).toMatch(/node-a has drainer\.dev\/migration-mode=skip: not evacuated/);
    expect(await s.record('node-a')).toBeUndefined();
    expect(os.service('node-a')?.status).toBe('enabled');
  });
});

describe('servers in ERROR (full stack)', () => {
  it('onError last: the healthy servers move first, then the ERROR one is tried and named as what stays', async () => {
    const { s, os, byName } = await start(
      [{ name: 'vm-broken', state: 'ERROR' }, { name: 'vm-1' }, { name: 'vm-2' }],
      { nova: { onError: 'last' } },
    );

    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Failed');
    expect([byName('vm-1').host, byName('vm-2').host, byName('vm-broken').host]).toEqual([
      'node-b',
      'node-b',
      'node-a',
    ]);
    // the ERROR server's migrate came after both healthy servers had left
    const log = s.sandbox.openstack.requestLog;
    const brokenAt = log.find((r) => r.method === 'POST' && r.path.includes(byName('vm-broken').id))?.at;
    const lastMove = Math.max(...['vm-1', 'vm-2'].map((n) => os.migrations(byName(n).id)[0]!.updatedAt));
    expect(brokenAt).toBeGreaterThanOrEqual(lastMove);
    expect(rec.lastError).toMatch(/vm-broken \(failed: in ERROR, stays on node-a: Nova refused cold-migrate/);
  });

  it('onError skip: the ERROR server stays, the rest moves, and the node is Evacuated', async () => {
    const { s, byName } = await start([{ name: 'vm-broken', state: 'ERROR' }, { name: 'vm-1' }], {
      nova: { onError: 'skip' },
    });
    // nova.onError skip leaves the broken server on the host by the operator's choice
    s.expectBroken('gate-disrupted-while-occupied', 'onError skip leaves vm-broken on the host on purpose');

    await s.cordon('node-a');
    const rec = await finished(s, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    expect([byName('vm-1').host, byName('vm-broken').host]).toEqual(['node-b', 'node-a']);
    expect(JSON.stringify(rec.outcomes)).toMatch(
      /vm-broken \(skipped: in ERROR: left on the host \(nova.onError skip\)\)/,
    );
  });
});
