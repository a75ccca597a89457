import { describe, expect, it } from 'vitest';
import { AuthError, ForbiddenError, TransientError } from '../../src/errors.ts';
import type { BackendPlugin, EvacuationContext, Outcome, Plan } from '../../src/core/backends/plugin.ts';
import { cli } from './harness.ts';

const plan: Plan = {
  plugin: 'nova',
  location: 'compute-1',
  workloads: [
    { id: 's1', name: 'web-1', owner: 'project-a', state: 'ACTIVE', action: 'live-migrate' },
    {
      id: 's2',
      name: 'db-1',
      owner: 'project-b',
      state: 'ERROR',
      action: 'none',
      blocker: 'server is in ERROR state',
    },
  ],
};

function fakeNova(
  evacuate: (ctx: EvacuationContext, node: string) => Promise<Outcome>,
  parts: Partial<BackendPlugin> = {},
) {
  const seen: { node?: string; dryRun?: boolean } = {};
  const plugin: BackendPlugin = {
    name: 'nova',
    plan: async () => plan,
    evacuate: (node, ctx) => {
      seen.node = node.name;
      seen.dryRun = ctx.dryRun;
      return evacuate(ctx, node.name);
    },
    restore: async () => undefined,
    ...parts,
  };
  return { plugin, seen };
}

const moved = {
  id: 's1',
  name: 'web-1',
  state: 'succeeded',
  action: 'live-migrate',
  attempts: 1,
  source: 'compute-1',
  target: 'compute-2',
  durationMs: 4000,
} as const;

describe('drainer plan', () => {
  it('prints a table of plugin, server, owner, state, action and blocker; a blocker exits 3', async () => {
    const { plugin } = fakeNova(async () => ({ plugin: 'nova', succeeded: true, workloads: [] }));
    const { code, stdout } = await cli({ plugins: [plugin] })('plan', '--node', 'node-1');
    expect(code).toBe(3);
    expect(stdout).toMatch(
      /^verdict: would be REFUSED\n {2}- nova: db-1 cannot move \(server is in ERROR state\)$/m,
    );
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('nova (compute-1): 2 VMs on node node-1');
    expect(lines[1]).toMatch(/^PLUGIN\s+WORKLOAD\s+PROJECT\/OWNER\s+STATE\s+ACTION\s+WHY$/);
    expect(lines[2]).toMatch(/^nova\s+web-1\s+project-a\s+ACTIVE\s+live-migrate$/);
    expect(lines[3]).toMatch(/^nova\s+db-1\s+project-b\s+ERROR\s+none\s+server is in ERROR state$/);
  });

  it('prints JSON with --output json', async () => {
    const { plugin } = fakeNova(async () => ({ plugin: 'nova', succeeded: true, workloads: [] }));
    const { stdout } = await cli({ plugins: [plugin] })('plan', '--output', 'json', '--node', 'n');
    expect(JSON.parse(stdout)).toMatchObject({
      node: 'n',
      verdict: 'refused',
      reasons: ['nova: db-1 cannot move (server is in ERROR state)'],
      unknown: [],
      invalid: [],
      plans: [plan],
      errors: [],
    });
  });

  it('exits 2 when the plugin is refused for lack of rights', async () => {
    const { plugin } = fakeNova(async () => ({ plugin: 'nova', succeeded: true, workloads: [] }), {
      plan: async () => {
        throw new ForbiddenError('admin rights needed to list servers of all projects', {
          api: 'nova',
          status: 403,
        });
      },
    });
    const { code, stderr } = await cli({ plugins: [plugin] })('plan');
    expect(code).toBe(2);
    expect(stderr).toContain('error: nova: admin rights needed');
  });

  it('exits 1 when it could not find out (the API failed), saying so in one line; -o yaml', async () => {
    const { plugin } = fakeNova(async () => ({ plugin: 'nova', succeeded: true, workloads: [] }), {
      plan: async () => {
        throw new TransientError('GET /servers/detail: connection refused', { api: 'nova' });
      },
    });
    const { code, stdout, stderr } = await cli({ plugins: [plugin] })('plan', '-o', 'yaml', '--node', 'n');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^verdict: unknown$/m);
    expect(stderr).toBe('error: nova: GET /servers/detail: connection refused\n');
  });

  it('exits 2 telling to disable Nova when it is enabled without credentials', async () => {
    const { code, stderr } = await cli()('plan');
    expect(code).toBe(2);
    expect(stderr).toMatch(/no OpenStack credentials found.*set nova\.enabled: false/);
  });
});

describe('drainer run-once', () => {
  it('exits 0 when every workload moved, acting on NODE_NAME by default', async () => {
    const { plugin, seen } = fakeNova(async (ctx) => {
      ctx.progress([{ ...moved, state: 'migrating', durationMs: undefined }]);
      return { plugin: 'nova', succeeded: true, workloads: [moved] };
    });
    const { code, stdout, stderr } = await cli({ plugins: [plugin], env: { NODE_NAME: 'node-7' } })(
      'run-once',
    );
    expect(code).toBe(0);
    expect(seen).toEqual({ node: 'node-7', dryRun: false });
    expect(stdout).toContain('nova: done, 1 moved, 0 stayed');
    // not a terminal: progress goes out as JSON log lines on stderr
    const states = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.workload === 's1')
      .map((l) => l.state);
    expect(states).toEqual(['migrating']);
  });

  it('--dry-run plans the hostname and says what would happen, evacuating nothing', async () => {
    const { plugin, seen } = fakeNova(async () => ({ plugin: 'nova', succeeded: true, workloads: [] }));
    const { code, stdout } = await cli({ plugins: [plugin] })('run-once', '--dry-run');
    expect(seen).toEqual({});
    expect(stdout.trimEnd().split('\n')).toEqual([
      'dry run of run-once on node this-host: nothing was changed',
      'nova: 2 workload(s): 1 would be handled (1 live-migrate), 1 cannot move',
      '  cannot move: db-1 (server is in ERROR state)',
      'verdict: would stop before its first change',
      '  - nova: db-1 cannot move (server is in ERROR state)',
    ]);
    expect(code).toBe(1);
  });

  it('exits 1 and prints each workload that stayed and why', async () => {
    const { plugin } = fakeNova(async () => ({
      plugin: 'nova',
      succeeded: false,
      workloads: [
        moved,
        {
          id: 's2',
          name: 'db-1',
          state: 'blocked',
          action: 'none',
          attempts: 0,
          message: 'server is in ERROR state',
        },
        {
          id: 's3',
          name: 'api-1',
          state: 'failed',
          action: 'live-migrate',
          attempts: 3,
          message: 'migration error after 3 attempts',
        },
      ],
    }));
    const { code, stdout } = await cli({ plugins: [plugin] })('run-once', '--node', 'n1');
    expect(code).toBe(1);
    expect(stdout).toContain('nova: incomplete, 1 moved, 2 stayed');
    expect(stdout).toContain('stayed: db-1 (s2) blocked: server is in ERROR state');
    expect(stdout).toContain('stayed: api-1 (s3) failed: migration error after 3 attempts');
  });

  it('exits 2 when the credentials are rejected', async () => {
    const { plugin } = fakeNova(async () => {
      throw new AuthError('Keystone rejected the credentials (401)', { api: 'keystone', status: 401 });
    });
    const { code, stdout } = await cli({ plugins: [plugin] })('run-once', '--node', 'n1');
    expect(code).toBe(2);
    expect(stdout).toContain('nova: incomplete, 0 moved, 0 stayed (Keystone rejected the credentials (401))');
  });

  it('draws one updating progress line per server on a terminal', async () => {
    const { plugin } = fakeNova(async (ctx) => {
      ctx.progress([
        { ...moved, state: 'migrating', durationMs: undefined, startedAt: new Date().toISOString() },
      ]);
      ctx.progress([moved]);
      return { plugin: 'nova', succeeded: true, workloads: [moved] };
    });
    const { code, stdout, stderr } = await cli({ plugins: [plugin], tty: true })('run-once', '--node', 'n1');
    expect(code).toBe(0);
    expect(stdout).toContain('nova  web-1  migrating  compute-1 → compute-2');
    expect(stdout).toContain('\x1b[1F\x1b[2Knova  web-1  succeeded  compute-1 → compute-2  4s');
    expect(stderr).toBe(''); // info logs would tear the lines: only warnings on a terminal
  });
});

describe('drainer restore', () => {
  it('exits 0 when every plugin restored, 1 when one failed', async () => {
    const ok = fakeNova(async () => ({ plugin: 'nova', succeeded: true, workloads: [] }));
    expect((await cli({ plugins: [ok.plugin] })('restore', '--node', 'n1')).stdout).toBe('nova: restored\n');

    const broken = fakeNova(async () => ({ plugin: 'nova', succeeded: true, workloads: [] }), {
      restore: async () => {
        throw new Error('service enable refused');
      },
    });
    const r = await cli({ plugins: [broken.plugin] })('restore', '--node', 'n1');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('nova: failed: service enable refused\n');
  });
});
