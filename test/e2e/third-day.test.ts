// Story: an operator's third day (issue 37), on the sandbox with the real kubectl. The read-only
// tools never say "all fine" about a place they did not look at: `kubectl drainer status -n wrongns`
// and `doctor -n wrongns` say the namespace does not exist (exit 2), a namespace without an agent is
// a finding, and a Prometheus blocker that cannot be evaluated is said in the same words by `status`
// and `plan`.
import { Buffer } from 'node:buffer';
import { execFile } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Violation } from '../../src/invariants/violation.ts';
import { microTime } from '../../src/core/fleet/budget.ts';
import type { KubeLease } from '../../src/kube/lease.ts';
import { cli } from '../cli/harness.ts';
import { hasKubectl } from '../daemonset/kubectl.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type RunningAgent, type Stack } from './stack.ts';

const run = hasKubectl || process.env.CI ? describe : describe.skip;
const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * `kubectl drainer …` as an operator types it: the real kubectl finds kubectl-drainer on PATH (a
 * link to this checkout's bin), in a directory whose config.yaml is `config` (none: no file).
 */
function kubectlDrainer(stack: Stack, config?: Record<string, unknown>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-third-day-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, stack.sandbox.kube.kubeconfig());
  if (config) writeFileSync(path.join(dir, 'config.yaml'), yaml.dump({ ...config, kubeconfig }));
  symlinkSync(path.join(ROOT, 'bin/drainer.js'), path.join(dir, 'kubectl-drainer'));
  const env = { PATH: `${dir}:${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir };
  return async (...args: string[]) => {
    try {
      const { stdout, stderr } = await promisify(execFile)(
        '/usr/bin/kubectl',
        ['drainer', ...args, '--kubeconfig', kubeconfig],
        { env, cwd: dir, encoding: 'utf8' },
      );
      return { code: 0, stdout, stderr };
    } catch (e) {
      const err = e as { code?: number; stdout?: string; stderr?: string };
      return { code: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
    }
  };
}

/** A loopback port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const { port } = s.address() as { port: number };
  await new Promise<void>((done) => s.close(() => done()));
  return port;
}

run("an operator's third day (issue 37), sandbox and real kubectl", () => {
  let stack: Stack;
  let agent: RunningAgent | undefined;
  beforeAll(async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }) });
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await stack?.close();
  });

  it('status, doctor, plan and run-once --dry-run with a namespace the cluster lacks: one line, exit 2, never "all fine"', async () => {
    const drainer = kubectlDrainer(stack, stack.sandbox.drainerConfig);
    const line = `error: fleet.namespace: namespace wrongns does not exist in the cluster: drainer's agents, Leases and gates live in drainer's namespace (-n/--namespace)\n`;
    // the pre-flights too (issue 52): a typo in -n never passes as "verdict: would succeed"
    const commands = [
      ['status'],
      ['doctor'],
      ['plan', '--node', 'node-a'],
      ['run-once', '--dry-run', '--node', 'node-a'],
    ];
    // side by side: each is a kubectl and a Node start (2-7 s on a loaded 2-core machine), and each only reads
    const answers = await Promise.all(commands.map((command) => drainer(...command, '-n', 'wrongns')));
    commands.forEach((command, i) => {
      const r = answers[i]!;
      expect({ command, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        command,
        code: 2,
        stdout: '',
        stderr: line,
      });
    });
  }, 30_000);

  it('a namespace without an agent: status exits 3 saying so, doctor has a no-agent finding', async () => {
    const drainer = kubectlDrainer(stack, stack.sandbox.drainerConfig);
    const status = await drainer('status', '-n', 'default');
    expect(status.code).toBe(3);
    expect(status.stdout).not.toMatch(/in service/);
    expect(status.stderr).toBe(
      "error: no drainer agent found in namespace default (no drainer-node-<node> Lease): nothing says whether the nodes are in service; is drainer installed there? (-n/--namespace names drainer's namespace)\n",
    );
    const doctor = await drainer('doctor', '-n', 'default', '-o', 'json');
    expect(doctor.code).toBe(3);
    const found = (JSON.parse(doctor.stdout) as { findings: Violation[] }).findings;
    expect(found.filter((f) => f.id === 'no-agent').map((f) => f.object)).toEqual(['namespace/default']);
    expect(doctor.stdout).not.toMatch(/every promise holds/);
  }, 30_000);

  it('once an agent runs, status lists its node in service with the agent alive (exit 0)', async () => {
    agent = stack.startAgent('node-b');
    await until('agent ready', () => agent!.agent.ready().ready);
    const drainer = kubectlDrainer(stack, stack.sandbox.drainerConfig);
    const status = await drainer('status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^node-b +InService .* alive/m);
  }, 30_000);

  it('run-once and restore next to a live agent are refused at once, naming it, nothing changed', async () => {
    // the agent renews every 20 min: a refusal that waited to see it renew would never come
    const live = stack.startAgent('node-a', { fleet: { agentLeaseDuration: 3600 } });
    try {
      await until('agent of node-a ready', () => live.agent.ready().ready);
      const drainer = kubectlDrainer(stack, stack.sandbox.drainerConfig);
      for (const command of ['run-once', 'restore']) {
        const r = await drainer(command, '--node', 'node-a', ...(command === 'run-once' ? ['--cordon'] : []));
        expect(r.code, command).toBe(2);
        expect(r.stderr, command).toMatch(
          new RegExp(
            `^error: node node-a is held by agent ${live.instance} \\(Lease drainer/drainer-node-node-a, renewed \\S+\\): it is acting on this node; ${command} refuses \\(stop that agent, or pass --force\\); if that agent is gone, its Lease runs out \\S+\\n$`,
          ),
        );
      }
      expect((await stack.node('node-a')).spec?.unschedulable).toBeFalsy();
      expect(stack.sandbox.openstack.state.serversOnHost('node-a')).toHaveLength(2);
    } finally {
      await live.stop();
    }
  }, 60_000);

  it('only a silent holder is waited for, with a human countdown, then taken over', async () => {
    // node-b's agent is killed: its Lease (3 s duration) was last renewed an hour ago
    await agent?.stop();
    agent = undefined;
    const renewTime = microTime(new Date(Date.now() - 3_600_000));
    const path = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases/drainer-node-node-b';
    const lease = await stack.k.request<KubeLease>({ path });
    await stack.k.request({
      method: 'PUT',
      path,
      body: {
        ...lease,
        spec: {
          holderIdentity: 'gone-pod/uid-9',
          leaseDurationSeconds: 3,
          renewTime,
          acquireTime: renewTime,
        },
      },
    });
    const drainer = kubectlDrainer(stack, stack.sandbox.drainerConfig);
    const r = await drainer('restore', '--node', 'node-b');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe(
      `node Lease held by gone-pod/uid-9, silent since ${renewTime}: waiting 3 s for it to renew before taking over (Ctrl-C stops; --force acts now)`,
    );
    expect(r.stderr).not.toMatch(/^\{/m); // no JSON log line among the human ones
  }, 30_000);

  it("plan with no local config weighs the agents' ConfigMap (a closed window) and their Secret, and says so", async () => {
    const start = utcClock(6);
    const end = utcClock(6 + 1 / 60);
    const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
    const uninstall = await install(stack, { maintenanceWindows: [{ days, start, end, timeZone: 'UTC' }] });
    try {
      const drainer = kubectlDrainer(stack); // no config.yaml, no credentials here
      const plan = await drainer('plan', '--node', 'node-a');
      expect(plan.code, plan.stderr).toBe(3);
      expect(plan.stdout).toMatch(
        /^config: the agents' ConfigMap drainer\/drainer-config; credentials: the agents' Secret drainer\/drainer-openstack \(cloud drainer\)$/m,
      );
      expect(plan.stdout).toMatch(
        /^verdict: would WAIT: outside the maintenance window \(fleet\.maintenanceWindows: /m,
      );
      expect(plan.stdout).toMatch(/^nova \(node-a\): 2 VMs on node node-a$/m); // Nova asked with the Secret's credentials

      // a local file overrides the ConfigMap, and the line names what it overrides
      const local = kubectlDrainer(stack, { fleet: { maintenanceWindows: [] } });
      const overridden = await local('plan', '--node', 'node-a');
      expect(overridden.stdout).toMatch(
        /^config: the agents' ConfigMap drainer\/drainer-config; overridden here \(local file, DRAINER_\* or flags\): fleet\.maintenanceWindows; credentials: /m,
      );
      expect(overridden.stdout).not.toMatch(/would WAIT/);

      // the Secret not there (or not readable) and no credentials here: one line says what is missing
      await stack.k.request({
        method: 'DELETE',
        path: '/api/v1/namespaces/drainer/secrets/drainer-openstack',
      });
      const bare = await drainer('plan', '--node', 'node-a');
      expect(bare.code).toBe(2);
      expect(bare.stdout).toBe('');
      expect(bare.stderr).toBe(
        "error: openstack.auth: no OpenStack credentials here (clouds.yaml with OS_CLOUD, OS_* variables, the config file's openstack: block), and the agents' cannot be read (Secret drainer/drainer-openstack: not in the cluster): give credentials here, or the right to read that Secret; nova.enabled: false (DRAINER_NOVA_ENABLED=false) leaves Nova out\n",
      );
    } finally {
      await uninstall();
    }
  }, 60_000);

  it('a refusal that names its node says it once (no "node: node …")', async () => {
    const drainer = kubectlDrainer(stack, stack.sandbox.drainerConfig);
    const r = await drainer('release', '--node', 'node-b');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: node node-b is in service \(no drainer record\): its gate opens /);
  }, 30_000);

  it('a Prometheus blocker that cannot be evaluated: status and plan say it in the same words', async () => {
    const port = await closedPort();
    const config = {
      ...stack.sandbox.drainerConfig,
      fleet: { blockers: { prometheus: { url: `http://127.0.0.1:${port}`, requestTimeout: 2 } } },
    };
    const drainer = cli({
      files: { 'config.yaml': yaml.dump({ ...config, kubeconfig: kubeconfigFile(stack) }) },
    });
    const status = await drainer('status');
    const plan = await drainer('plan', '--node', 'node-b');
    const words = `Prometheus cannot be evaluated: http://127.0.0.1:${port}/api/v1/alerts unreachable: connect ECONNREFUSED 127.0.0.1:${port}`;
    // the header's blockers part (its own line once the header passes 120 columns, wrapped under itself)
    const header = status.stdout.replace(/\n {2}/g, ' ').split('\n');
    expect(header.find((l) => l.includes('blockers: '))).toMatch(new RegExp(`blockers: ${escape(words)}$`));
    expect(plan.code, plan.stderr).toBe(3);
    expect(plan.stdout).toMatch(new RegExp(`^verdict: would WAIT: blocked: ${escape(words)}$`, 'm'));
  }, 30_000);
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function kubeconfigFile(stack: Stack): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-third-day-kc-')), 'kubeconfig');
  writeFileSync(file, stack.sandbox.kube.kubeconfig());
  return file;
}

/** "HH:MM" in UTC, hours from now. */
const utcClock = (hoursAhead: number): string => {
  const d = new Date(Date.now() + hoursAhead * 3_600_000);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
};

/** The stock install's ConfigMap and Secret, made from the sandbox's config (as an operator fills them in). */
async function install(stack: Stack, fleet: Record<string, unknown>): Promise<() => Promise<void>> {
  const {
    openstack,
    kubeconfig: _local,
    ...settings
  } = stack.sandbox.drainerConfig as {
    openstack: { auth: Record<string, string>; regionName: string };
    kubeconfig?: string;
  };
  const a = openstack.auth;
  const clouds = {
    clouds: {
      drainer: {
        auth: {
          auth_url: a.authUrl,
          username: a.username,
          password: a.password,
          project_name: a.projectName,
          user_domain_name: a.userDomainName,
          project_domain_name: a.projectDomainName,
        },
        region_name: openstack.regionName,
        interface: 'public',
      },
    },
  };
  const ns = '/api/v1/namespaces/drainer';
  await stack.k.request({
    method: 'POST',
    path: `${ns}/configmaps`,
    body: {
      metadata: { name: 'drainer-config' },
      data: { 'config.yaml': yaml.dump({ ...settings, fleet }) },
    },
  });
  await stack.k.request({
    method: 'POST',
    path: `${ns}/secrets`,
    body: {
      metadata: { name: 'drainer-openstack' },
      data: { 'clouds.yaml': Buffer.from(yaml.dump(clouds)).toString('base64') },
    },
  });
  return async () => {
    await stack.k.request({ method: 'DELETE', path: `${ns}/configmaps/drainer-config` });
    await stack.k
      .request({ method: 'DELETE', path: `${ns}/secrets/drainer-openstack` })
      .catch(() => undefined);
  };
}
