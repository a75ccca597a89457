// drainer run-once / plan / restore through the real registry and Nova plugin, against the
// sandbox Keystone + Nova emulation on loopback (scaled clock, small poll interval).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import { type OpenStackSandbox, startOpenStack } from '../../src/sandbox/openstack/index.ts';
import { cli } from './harness.ts';

let cloud: OpenStackSandbox | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

async function start(
  servers: { name: string; status?: 'ACTIVE' | 'ERROR'; ramMb?: number; metadata?: Record<string, string> }[],
  targetRamMb?: number,
  faults?: { hideHost: boolean },
) {
  cloud = await startOpenStack({
    ...(faults ? { faults } : {}),
    clock: new ScaledClock(50),
    host: '127.0.0.1',
    hosts: [{ name: 'compute-a' }, { name: 'compute-b', ...(targetRamMb ? { ramMb: targetRamMb } : {}) }],
    servers: servers.map((s) => ({ ...s, projectId: 'demo', host: 'compute-a', migrationMs: 1000 })),
  });
  const admin = cloud.credentials.admin;
  return {
    OS_AUTH_URL: cloud.identityUrl,
    OS_USERNAME: admin.username,
    OS_PASSWORD: admin.password,
    OS_PROJECT_NAME: admin.project,
    OS_USER_DOMAIN_NAME: admin.domain,
    OS_PROJECT_DOMAIN_NAME: admin.domain,
    OS_REGION_NAME: cloud.region,
    DRAINER_NOVA_POLL_INTERVAL: '20ms',
    DRAINER_NOVA_RETRY_BACKOFF: '10ms',
    DRAINER_LOG_LEVEL: 'warn',
  };
}

describe('run-once against the sandbox Nova', () => {
  it('moves every server off the host, exits 0, and restore re-enables the service', async () => {
    const env = await start([{ name: 'vm-1' }, { name: 'vm-2' }]);

    const drainer = cli({ env }); // one working directory: restore finds run-once's state file
    const planned = await drainer('plan', '--node', 'compute-a', '--output', 'json');
    expect(planned.code).toBe(0);
    expect(
      JSON.parse(planned.stdout)
        .plans[0].workloads.map((w: { name: string }) => w.name)
        .sort(),
    ).toEqual(['vm-1', 'vm-2']);

    const run = await drainer('run-once', '--node', 'compute-a');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('nova: done, 2 moved, 0 stayed');
    expect(cloud!.state.serversOnHost('compute-a')).toEqual([]);
    expect(cloud!.state.service('compute-a')?.status).toBe('disabled');

    const restored = await drainer('restore', '--node', 'compute-a');
    expect(restored.code).toBe(0);
    expect(cloud!.state.service('compute-a')?.status).toBe('enabled');
  });

  it('restore at the default log level prints its lines and no JSON log line', async () => {
    const { DRAINER_LOG_LEVEL: _level, ...env } = await start([{ name: 'vm-1' }]);
    const drainer = cli({ env });
    expect((await drainer('run-once', '--node', 'compute-a')).code).toBe(0);

    const restored = await drainer('restore', '--node', 'compute-a');

    expect(restored.code).toBe(0);
    expect(restored.stdout).toBe('nova: restored\n');
    expect(restored.stderr).toBe('');
  });

  it('exits 1 and names the server that cannot move', async () => {
    const env = await start([{ name: 'vm-ok' }, { name: 'vm-broken', status: 'ERROR' }]);
    const run = await cli({ env })('run-once', '--node', 'compute-a');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/stayed: vm-broken \(.*\) blocked: /);
    expect(cloud!.state.serversOnHost('compute-a').map((s) => s.name)).toEqual(['vm-broken']);
  });

  it('refuses before any change when Nova hides the host attribute (exit 2, EvacuationBlocked naming admin rights)', async () => {
    const env = await start([{ name: 'vm-1' }, { name: 'vm-2' }], undefined, { hideHost: true });

    const drainer = cli({ env });
    const planned = await drainer('plan', '--node', 'compute-a');
    const run = await drainer('run-once', '--node', 'compute-a');

    expect(planned.stdout).toMatch(/BLOCKED \(missing-rights\): nova: .*admin role/);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(
      /^EvacuationBlocked: nova: .*OS-EXT-SRV-ATTR:host.*admin role.*\nnothing was changed\n$/,
    );
    expect(cloud!.state.service('compute-a')?.status).toBe('enabled');
    expect(cloud!.state.servers().every((s) => cloud!.state.migrateCalls(s.id) === 0)).toBe(true);
  });

  it('refuses before any change when the servers do not fit elsewhere (exit 1, InsufficientCapacity)', async () => {
    const env = await start(
      [
        { name: 'vm-big', ramMb: 16384 },
        { name: 'vm-small', ramMb: 1024 },
      ],
      8192,
    );
    const drainer = cli({ env });

    const planned = await drainer('plan', '--node', 'compute-a');
    expect(planned.stdout).toContain(
      'capacity: INSUFFICIENT: nova: 1 of 2 servers does not fit: vm-big (1 vCPU, 16 GiB RAM, 1 GB disk)',
    );
    const run = await drainer('run-once', '--node', 'compute-a');

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^InsufficientCapacity: nova: 1 of 2 servers does not fit: vm-big .*\nnothing was changed\n$/,
    );
    expect(cloud!.state.service('compute-a')?.status).toBe('enabled');
    expect(cloud!.state.serversOnHost('compute-a')).toHaveLength(2);
    expect(cloud!.state.servers().every((s) => cloud!.state.migrateCalls(s.id) === 0)).toBe(true);

    const warned = await cli({ env: { ...env, DRAINER_EVACUATION_CAPACITY_CHECK: 'warn' } })(
      'run-once',
      '--node',
      'compute-a',
    );
    expect(warned.stderr).toContain('warning: InsufficientCapacity: nova: 1 of 2 servers does not fit');
    expect(cloud!.state.service('compute-a')?.status).toBe('disabled');
  });

  it('exits 2 when the credentials are wrong', async () => {
    const env = await start([{ name: 'vm-1' }]);
    const run = await cli({ env: { ...env, OS_PASSWORD: 'wrong' } })('run-once', '--node', 'compute-a');
    expect(run.code).toBe(2);
    expect(run.stdout).not.toContain('wrong');
    expect(cloud!.state.serversOnHost('compute-a')).toHaveLength(1);
  });

  it('--reboot declares the maintenance a reboot: a server whose way out is stop is stopped on the host, the rest move', async () => {
    const env = await start([
      { name: 'vm-stop', metadata: { 'drainer.dev:maintenance': 'stop' } },
      { name: 'vm-live' },
    ]);
    const byName = (name: string) => cloud!.state.servers().find((s) => s.name === name)!;

    const refused = await cli({ env })('run-once', '--node', 'compute-a');
    // without the declaration the stop server is a blocker (run-once without Kubernetes still moves the rest)
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/stayed: vm-stop .* blocked: way out "stop" keeps the server on the host/);
    expect(byName('vm-stop').status).toBe('ACTIVE');

    const run = await cli({ env })('run-once', '--node', 'compute-a', '--reboot');
    expect(run.code).toBe(0);
    expect([byName('vm-stop').host, byName('vm-stop').status]).toEqual(['compute-a', 'SHUTOFF']);
    expect(byName('vm-live').host).toBe('compute-b');
  });

  it('--migration-mode manual: drainer disables the service, moves nothing, and waits for someone else', async () => {
    const env = await start([{ name: 'vm-1' }]);
    const planned = await cli({ env })(
      'plan',
      '--node',
      'compute-a',
      '--migration-mode',
      'manual',
      '-o',
      'json',
    );
    expect(
      JSON.parse(planned.stdout).plans[0].workloads.map((w: { action: string; why: string }) => [
        w.action,
        w.why,
      ]),
    ).toEqual([
      [
        'external',
        'node compute-a drainer.dev/migration-mode=manual: moved by someone else; the drain waits until the host is empty',
      ],
    ]);

    const run = await cli({ env: { ...env, DRAINER_EVACUATION_TIMEOUT: '3s' } })(
      'run-once',
      '--node',
      'compute-a',
      '--migration-mode',
      'manual',
    );

    expect(run.code).toBe(1);
    // the deadline ends the wait (the plugin's own check or the host's abort, whichever comes first)
    expect(run.stdout).toMatch(
      /stayed: vm-1 \(.*\) pending: waiting for someone else to move it \(node drainer\.dev\/migration-mode=manual\)/,
    );
    expect(cloud!.state.serversOnHost('compute-a').map((s) => s.name)).toEqual(['vm-1']);
    expect(cloud!.state.service('compute-a')?.status).toBe('disabled');
  });

  it('refuses --migration-mode and --reboot when Kubernetes is configured: the Node decides there (exit 2)', async () => {
    const env = await start([{ name: 'vm-1' }]);
    const kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-kc-')), 'config');
    writeFileSync(kubeconfig, KUBECONFIG);
    const drainer = cli({ env: { ...env, KUBECONFIG: kubeconfig } });

    const run = await drainer('run-once', '--node', 'compute-a', '--reboot');

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'error: --migration-mode and --reboot are for a node without Kubernetes; with Kubernetes set drainer.dev/migration-mode or drainer.dev/reboot on Node compute-a\n',
    );
    expect(cloud!.state.service('compute-a')?.status).toBe('enabled');
  });
});

/** A kubeconfig naming an API server nobody listens on: configured, never reached. */
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:1' } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;
