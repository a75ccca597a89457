// The read-only roles (daemonset/clusterrole-readonly.yaml, role-readonly.yaml) let `status`, `plan`
// and `doctor` do their whole job, and grant nothing else. Agents evacuate a node in the sandbox
// (records, gates, Leases, Events), then stop; from then on the sandbox's API server answers 403 to
// every request the read-only rules do not allow, as an API server enforcing RBAC for a user bound
// to them would, and each command runs as an operator would run it.
import path from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { parseRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { demoConfig, startAgents } from '../../src/demo/agents.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { Capture, cli, type RunResult } from '../cli/harness.ts';
import { allows, callOf, key, rulesOf, type Call, type Rule } from './rbac-rules.ts';

const readOnly = [...rulesOf('clusterrole-readonly.yaml'), ...rulesOf('role-readonly.yaml')];

/**
 * The sandbox's fault injector asks its matcher whether a request fails: this one says yes to every
 * resource request the rules do not allow (discovery is allowed to everyone), and keeps the log.
 */
class RbacGuard extends RegExp {
  readonly seen: string[] = [];
  readonly calls: Call[] = [];
  readonly denied: string[] = [];
  constructor() {
    super('');
  }
  override test(request: string): boolean {
    const [method, url] = request.split(' ');
    if (!url) return false; // asked again with the path alone: answered already
    const call = callOf(method ?? 'GET', url);
    if (!call) return false;
    this.seen.push(key(call));
    this.calls.push(call);
    if (allows(readOnly, call)) return false;
    this.denied.push(`${key(call)} (${url})`);
    return true;
  }
}

/**
 * Each grant of each rule that no call needed: a Role's where it holds, a ClusterRole's where no Role
 * rule would have done (a namespaced grant repeated cluster-wide is a grant too many).
 */
function unusedGrants(rules: readonly Rule[], calls: readonly Call[]): string[] {
  const namespaced = rules.filter((r) => r.namespace !== undefined);
  return rules.flatMap((r) =>
    r.apiGroups.flatMap((group) =>
      r.resources.flatMap((resource) =>
        r.verbs.flatMap((verb) => {
          const needed = calls.some(
            (c) =>
              c.group === group &&
              c.resource === resource &&
              c.verb === verb &&
              (r.namespace !== undefined ? c.namespace === r.namespace : !allows(namespaced, c)),
          );
          const where = r.namespace === undefined ? 'ClusterRole' : `Role in ${r.namespace}`;
          return needed ? [] : [`${key({ group, resource, verb })} (${where})`];
        }),
      ),
    ),
  );
}

describe('the read-only roles: status, plan and doctor under them', () => {
  let sb: Sandbox;
  let guard: RbacGuard;
  let kubeconfig = '';
  const phase = (node: string) =>
    parseRecord(sb.kube.store.get('nodes', undefined, node).metadata.annotations?.[STATE_ANNOTATION])?.phase;
  /** The CLI with the sandbox's config (its OpenStack credentials) and a kubeconfig; `settings` over it. */
  const drainer = (settings: Record<string, unknown> = sb.drainerConfig) =>
    cli({ files: { 'config.yaml': yaml.dump({ ...settings, kubeconfig }) } });
  /** What each command said with every right, and under the read-only roles. */
  const admin: Record<string, RunResult> = {};
  const results: Record<string, RunResult> = {};

  beforeAll(async () => {
    sb = await startSandbox({ scale: 10 });
    kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-rbac-ro-')), 'kubeconfig');
    writeFileSync(kubeconfig, sb.kube.kubeconfig());
    const stop = new AbortController();
    const agents = startAgents({
      nodes: sb.scenario.nodes.map((n) => n.name),
      config: demoConfig(sb.drainerConfig, { drain: { force: true }, logLevel: 'warn' }),
      kubeconfigYaml: sb.kube.kubeconfig(),
      log: createLogger({ level: 'silent' }),
      signal: stop.signal,
    });
    const until = async (what: string, check: () => boolean) => {
      const end = Date.now() + 60_000;
      while (!check()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await until('agents ready', () => agents.ready());
    sb.kube.store.patch('nodes', undefined, 'node-1', 'application/merge-patch+json', {
      spec: { unschedulable: true },
    });
    await until('node-1 evacuated', () => phase('node-1') === 'Evacuated');
    await agents.stop();
    // the agents' DaemonSet and the ConfigMap it mounts, as `kubectl apply -k daemonset/` leaves them
    sb.kube.store.create('configmaps', {
      metadata: { name: 'drainer-config-5m7k2h9c4b', namespace: 'drainer' },
      data: { 'config.yaml': 'nova:\n  maxConcurrentMigrations: 2\n' },
    });
    sb.kube.store.create('daemonsets.apps', {
      metadata: { name: 'drainer', namespace: 'drainer' },
      spec: {
        selector: { matchLabels: { app: 'drainer' } },
        template: {
          metadata: { labels: { app: 'drainer' } },
          spec: {
            containers: [
              {
                name: 'drainer',
                image: 'drainer',
                args: ['daemon', '--config-path', '/etc/drainer/config.yaml'],
                volumeMounts: [{ name: 'config', mountPath: '/etc/drainer' }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'drainer-config-5m7k2h9c4b' } }],
          },
        },
      },
    });
    // each command once with every right (what it says then is what it must say under the role)
    for (const [name, argv] of Object.entries(COMMANDS)) admin[name] = await drainer()(...argv);
    guard = new RbacGuard();
    sb.kube.faults.failRequests({ status: 403, forMs: 1e12, match: guard });
    for (const [name, argv] of Object.entries(COMMANDS)) results[name] = await drainer()(...argv);
    results.watch = await watchOnce(kubeconfig, sb.drainerConfig, guard);
  }, 120_000);
  afterAll(async () => sb?.close());

  it('allows every request the three commands make', () => {
    expect(guard.denied).toEqual([]);
    expect(guard.seen.length).toBeGreaterThan(10);
  });

  it('each command answers as it does with every right: same exit code, same errors', () => {
    for (const name of Object.keys(COMMANDS)) {
      expect(results[name]?.code, `${name}: ${results[name]?.stderr}`).toBe(admin[name]?.code);
      expect(results[name]?.stderr, name).toBe(admin[name]?.stderr);
    }
    expect(results.status?.stdout).toMatch(/^node-1\s+Evacuated\s/m);
    expect(results.status?.stdout).toMatch(
      /config: the agents' ConfigMap drainer\/drainer-config-5m7k2h9c4b/,
    );
    expect(results.watch?.stdout).toMatch(/^node-1\s+Evacuated\s/m);
    for (const w of WATCHES) expect(guard.seen, 'status --watch').toContain(`watch ${w}`);
    expect([0, 3]).toContain(results.plan?.code);
    expect([0, 3]).toContain(results.doctor?.code);
  });

  it("grants nothing the commands do not read, and cluster-wide only what they read beyond drainer's namespace", () => {
    // plan reads a Machine's MachineSet and MachineDeployment, and a node's NodePool, only where a
    // node has them: this sandbox's nodes have none (test/e2e/plan-timeouts.test.ts has them)
    const elsewhere = new Set([
      'get cluster.x-k8s.io/machinesets (ClusterRole)',
      'get cluster.x-k8s.io/machinedeployments (ClusterRole)',
      'get karpenter.sh/nodepools (ClusterRole)',
    ]);
    expect(unusedGrants(readOnly, guard.calls).filter((g) => !elsewhere.has(g))).toEqual([]);
  });

  it('reads only: no verb but get, list and watch, and no Secret', () => {
    for (const r of readOnly) {
      expect(
        r.verbs.filter((v) => !['get', 'list', 'watch'].includes(v)),
        r.resources.join(),
      ).toEqual([]);
      expect(r.resources).not.toContain('secrets');
    }
  });

  it("without OpenStack credentials of its own, plan says in one line that the agents' Secret is not readable", async () => {
    const { openstack: _credentials, ...settings } = sb.drainerConfig;
    const before = guard.denied.length;
    const r = await drainer(settings)('plan', '--node', 'node-2');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^error: openstack\.auth: no OpenStack credentials here .*\(Secret drainer\/drainer-openstack: forbidden\): give credentials here, or the right to read that Secret; /,
    );
    expect(guard.denied.slice(before)).toEqual([
      'get core/secrets (/api/v1/namespaces/drainer/secrets/drainer-openstack)',
    ]);
  });
});

const COMMANDS: Record<string, string[]> = {
  status: ['status'],
  statusJson: ['status', '-o', 'json'],
  plan: ['plan', '--node', 'node-1'],
  planInService: ['plan', '--node', 'node-2'],
  doctor: ['doctor'],
};

/** What `status --watch` keeps open: the Nodes, the agents' Leases, the gates' pods and budgets. */
const WATCHES = ['core/nodes', 'coordination.k8s.io/leases', 'core/pods', 'policy/poddisruptionbudgets'];

/** `status --watch` until its first screen is drawn and its watches are open, then Ctrl-C. */
async function watchOnce(
  kubeconfig: string,
  settings: Record<string, unknown>,
  guard: RbacGuard,
): Promise<RunResult> {
  const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-rbac-ro-watch-'));
  writeFileSync(path.join(cwd, 'config.yaml'), yaml.dump({ ...settings, kubeconfig }));
  const ctrlC = new AbortController();
  const stdout = new Capture();
  const stderr = new Capture();
  const watching = () => WATCHES.every((w) => guard.seen.includes(`watch ${w}`));
  const ctrlCOnceWatching = async () => {
    const end = Date.now() + 30_000;
    while (!(stdout.text && watching()) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    ctrlC.abort();
  };
  const [code] = await Promise.all([
    main(['status', '--watch'], {
      io: {
        stdout,
        stderr,
        env: {},
        cwd,
        homeDir: path.join(cwd, 'home'),
        etcDir: path.join(cwd, 'etc'),
        hostname: () => 'this-host',
        signal: ctrlC.signal,
      },
    }),
    ctrlCOnceWatching(),
  ]);
  return { code, stdout: stdout.text, stderr: stderr.text };
}
