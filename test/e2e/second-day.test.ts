// Story: an operator's second day (issue 30), on the sandbox with the real kubectl. Before a
// maintenance they ask `drainer plan` and get "would WAIT" while the window is closed; a failed
// evacuation leaves a server on the host, and `drainer release` refuses until --force, then says in
// two lines what stays and how to re-arm; a second sandbox leaves the first one working; a second
// agent on the host is told which key names its port; and a mistyped node gets one and the same
// line from every command.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gateName } from '../../src/kube/gate.ts';
import type { KubePod } from '../../src/kube/types.ts';
import { cli } from '../cli/harness.ts';
import { hasKubectl, kubectl } from '../daemonset/kubectl.ts';
import { smallWorld } from './scenario.ts';
import { gatePodOf, gateRunning } from './gate-stack.ts';
import { finished, startStack, until, type Stack } from './stack.ts';

const run = hasKubectl || process.env.CI ? describe : describe.skip;
const ROOT = path.resolve(import.meta.dirname, '../..');

/** An operator's working directory: the sandbox's kubeconfig and a config file made of `overrides`. */
function operator(stack: Stack, overrides: Record<string, unknown> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-second-day-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, stack.sandbox.kube.kubeconfig());
  const config = { ...stack.sandbox.drainerConfig, kubeconfig, logLevel: 'info', ...overrides };
  return {
    drainer: cli({ files: { 'config.yaml': yaml.dump(config) } }),
    kube: (args: string[]) => kubectl(['--kubeconfig', kubeconfig, ...args]),
  };
}

/** "HH:MM" in UTC, hours from now. */
const utcClock = (hoursAhead: number): string => {
  const d = new Date(Date.now() + hoursAhead * 3_600_000);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
};

run("an operator's second day (issue 30), sandbox and real kubectl", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      scenario: smallWorld({ servers: 2, faults: { failMigrations: ['vm-2'] } }),
    });
  }, 60_000);
  afterAll(async () => stack?.close());

  it('plan under a closed window exits 3, and its verdict names the window and when it opens', async () => {
    // a one-minute window six hours from now, every day: closed now, whatever the day
    const start = utcClock(6);
    const end = utcClock(6 + 1 / 60);
    const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
    const { drainer } = operator(stack, {
      fleet: { maintenanceWindows: [{ days, start, end, timeZone: 'UTC' }] },
    });
    const r = await drainer('plan', '--node', 'node-a');
    expect(r.code, r.stderr).toBe(3);
    const verdict = r.stdout.split('\n').find((l) => l.startsWith('verdict:'));
    expect(verdict).toMatch(
      new RegExp(
        `^verdict: would WAIT: outside the maintenance window \\(fleet\\.maintenanceWindows: ${days.join(',')} ${start}–${end} UTC\\); opens \\w{3} ${start} UTC \\(in (5 h 59 min|6 h)\\)$`,
      ),
    );
    // the same instant as JSON, for scripts
    const json = await drainer('plan', '--node', 'node-a', '-o', 'json');
    expect(json.code).toBe(3);
    expect((JSON.parse(json.stdout) as { verdict: string }).verdict).toBe('would-wait');
  });

  it('plan weighs a freeze and a blocking pod as the agent would; start --now lets it through', async () => {
    const frozen = operator(stack, {
      fleet: {
        freezes: [{ from: '2020-01-01T00:00:00Z', to: '2099-01-01T00:00:00Z', reason: 'year-end freeze' }],
      },
    });
    const f = await frozen.drainer('plan', '--node', 'node-a');
    expect(f.code).toBe(3);
    expect(f.stdout).toMatch(
      /^verdict: would WAIT: frozen \(year-end freeze\) until 2099-01-01T00:00:00Z; /m,
    );
    const pods = await stack.k.request<{ items: KubePod[] }>({
      path: '/api/v1/pods',
      query: { fieldSelector: 'spec.nodeName=node-a', labelSelector: 'app=web' },
    });
    expect(pods.items.length).toBeGreaterThan(0);
    const held = operator(stack, { fleet: { blockers: { podSelector: 'app=web' } } });
    const p = await held.drainer('plan', '--node', 'node-a');
    expect(p.code).toBe(3);
    expect(p.stdout).toMatch(
      /^verdict: would WAIT: blocked by pods? on the node matching app=web: shop\/web-/m,
    );
    // asked to start now: windows, freezes and blockers do not hold it (the agent's rule)
    const start = await held.drainer('start', 'node-a', '--now', '--by', 'alice@ops');
    expect(start.code, start.stderr).toBe(0);
    const now = await held.drainer('plan', '--node', 'node-a');
    expect(now.stdout).toMatch(
      /^note: start: start-now asked by alice@ops: windows, freezes and blockers do not hold it$/m,
    );
    expect(now.stdout).not.toMatch(/would WAIT/);
    // back as it was for the stories below
    await stack.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: 'application/merge-patch+json',
      body: { spec: { unschedulable: false }, metadata: { annotations: { 'drainer.dev/start-now': null } } },
    });
  });

  it('run-once --dry-run says what would happen, never a phase it did not reach', async () => {
    const { drainer } = operator(stack);
    const r = await drainer('run-once', '--node', 'node-a', '--dry-run');
    expect(r.stdout).toMatch(/^dry run of run-once on node node-a: nothing was changed$/m);
    expect(r.stdout).toMatch(/^nova: 2 workload\(s\): 2 would be handled \(2 live-migrate\)$/m);
    expect(r.stdout).not.toMatch(/Evacuated|0 moved/);
    expect((await stack.node('node-a')).metadata.annotations?.['drainer.dev/state']).toBeUndefined();
    expect(stack.sandbox.openstack.state.serversOnHost('node-a')).toHaveLength(2);
  });

  it('an unknown node gets the same exit-2 line from start, plan, status, release and restore', async () => {
    const { drainer } = operator(stack);
    const line = 'error: node node-9 does not exist in the cluster\n';
    for (const args of [
      ['start', 'node-9', '--now'],
      ['plan', '--node', 'node-9'],
      ['status', '--node', 'node-9'],
      ['release', '--node', 'node-9'],
      ['restore', '--node', 'node-9'],
    ]) {
      const r = await drainer(...args);
      expect({ args, code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({
        args,
        code: 2,
        stderr: line,
        stdout: '',
      });
    }
  });

  it('release refuses while a server is on the host, then with --force releases for people; restore re-arms', async () => {
    const agent = stack.startAgent('node-a');
    const gatePod = () => gatePodOf(stack);
    await gateRunning(stack);
    const { drainer, kube } = operator(stack);
    expect((await kube(['cordon', 'node-a'])).code).toBe(0);
    const rec = await finished(stack, 'node-a');
    expect(rec.phase).toBe('Failed');
    expect(stack.sandbox.openstack.state.serversOnHost('node-a').map((s) => s.name)).toEqual(['vm-2']);

    const refused = await drainer('release', '--node', 'node-a');
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trimEnd().split('\n')).toEqual([
      'node node-a still has 1 VM (nova/vm-2) on the host: not released, as a drain that goes on (and the reboot or deletion after it) takes them down',
      'move them first, or release anyway: drainer release --node node-a --force',
    ]);
    expect(await gatePod()).toBeDefined();

    const forced = await drainer('release', '--node', 'node-a', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    // for people: two lines, no JSON log
    expect(forced.stderr).toBe('');
    expect(forced.stdout.trimEnd().split('\n')).toEqual([
      `node node-a: drain gate drainer/${gateName('node-a')} released (phase Failed) with 1 VM (nova/vm-2) still on the host; the drain goes on now`,
      'it stays released until the node is restored: to re-arm it, restore the node (kubectl uncordon node-a, or delete its NodeMaintenance)',
    ]);
    expect((await stack.node('node-a')).metadata.annotations?.['drainer.dev/gate-released']).toBeDefined();
    await until('gate released', async () => (await gatePod()) === undefined);
    // asked again: it says so, and changes nothing
    const again = await drainer('release', '--node', 'node-a');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /^node node-a: drain gate released already \(at \S+\); to re-arm it, restore the node \(kubectl uncordon node-a, or delete its NodeMaintenance\)\n$/,
    );

    // the re-arm the second line names
    expect((await kube(['uncordon', 'node-a'])).code).toBe(0);
    await until('restored', async () => (await stack.record('node-a')) === undefined);
    await until('gate held again', async () => (await gatePod())?.status?.phase === 'Running');
    expect((await stack.node('node-a')).metadata.annotations?.['drainer.dev/gate-released']).toBeUndefined();
    await agent.stop();
  }, 60_000);

  it("kubectl drainer takes kubectl's global flags: --kubeconfig, --context, -n", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-kubectl-flags-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, stack.sandbox.kube.kubeconfig());
    symlinkSync(path.join(ROOT, 'bin/drainer.js'), path.join(dir, 'kubectl-drainer'));
    const context = (await kubectl(['--kubeconfig', kubeconfig, 'config', 'current-context'])).stdout.trim();
    // no agent runs by now: status says so (exit 3) about the namespace -n named, with its JSON
    const r = await promisify(execFile)(
      '/usr/bin/kubectl',
      ['drainer', 'status', '--kubeconfig', kubeconfig, '--context', context, '-n', 'drainer', '-o', 'json'],
      { env: { PATH: `${dir}:${path.dirname(process.execPath)}:/usr/bin:/bin` }, encoding: 'utf8' },
    ).catch((e: unknown) => e as { code: number; stdout: string; stderr: string });
    expect(r.stderr).toMatch(/^error: no drainer agent found in namespace drainer /);
    expect(JSON.parse(r.stdout)).toHaveProperty('nodes');
  });

  describe('a second agent on the same host', () => {
    let busy: Server;
    afterEach(() => new Promise<void>((done) => (busy ? busy.close(() => done()) : done())));

    it('is told in one line that its port is in use, naming server.port', async () => {
      busy = createServer();
      await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
      const port = (busy.address() as { port: number }).port;
      const { drainer } = operator(stack, {
        server: { enabled: true, port, bindAddress: '127.0.0.1' },
        nodeName: 'node-b',
      });
      const r = await drainer('daemon');
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `error: server.port: the health and metrics server cannot listen: 127.0.0.1:${port} is in use (another drainer agent on this host, or another program); set server.port (DRAINER_SERVER_PORT) to a free port, or server.enabled: false\n`,
      );
    });
  });
});

run('a second sandbox leaves the first one working (state directory)', () => {
  let first: ChildProcess | undefined;
  afterAll(() => void first?.kill('SIGTERM'));

  it('refuses the running sandbox directory, and the first one still answers kubectl', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-state-'));
    // the first sandbox: its own process, as an operator starts it in a terminal
    first = spawn(process.execPath, [path.join(ROOT, 'src/cli.ts'), 'sandbox', '--state-dir', dir], {
      stdio: 'ignore',
    });
    await until('first sandbox up', () => existsSync(path.join(dir, 'sandbox.pid')), 30_000);
    await until('its address recorded', () =>
      readFileSync(path.join(dir, 'sandbox.pid'), 'utf8').includes('kube'),
    );
    const kubeconfig = readFileSync(path.join(dir, 'kubeconfig'), 'utf8');
    const config = readFileSync(path.join(dir, 'config.yaml'), 'utf8');

    const operator2 = cli();
    for (const command of ['sandbox', 'demo']) {
      const r = await operator2(command, '--state-dir', dir);
      expect(r.code, command).toBe(2);
      expect(r.stderr, command).toMatch(
        new RegExp(
          `^error: --state-dir: a sandbox is running in .+ \\(pid ${first.pid ?? 0}, Kubernetes API http://127\\.0\\.0\\.1:\\d+\\); its kubeconfig and config\\.yaml stay as they are: stop it, or pass another --state-dir\\n$`,
        ),
      );
    }
    expect(readFileSync(path.join(dir, 'kubeconfig'), 'utf8')).toBe(kubeconfig);
    expect(readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe(config);
    const nodes = await kubectl(['--kubeconfig', path.join(dir, 'kubeconfig'), 'get', 'nodes', '-o', 'name']);
    expect(nodes.code, nodes.stderr).toBe(0);
    expect(nodes.stdout).toContain('node/node-1');
  }, 60_000);
});
