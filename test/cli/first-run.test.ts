// A first run never shows a stack trace: an unsupported Node gets one line, a broken install gets
// one line and a hint, and an unexpected error in a command gets its cause and a hint; the stack
// only at --log-level debug.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { Capture } from './harness.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/drainer.js');
const SYSTEM_NODE = '/usr/bin/node';

async function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(cmd, args, {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...opts.env },
      cwd: opts.cwd ?? ROOT,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

const systemVersion = existsSync(SYSTEM_NODE) ? (await run(SYSTEM_NODE, ['--version'])).stdout.trim() : '';
const [major = 0, minor = 0] = systemVersion.replace(/^v/, '').split('.').map(Number);
const systemTooOld = systemVersion !== '' && (major < 22 || (major === 22 && minor < 18));

describe('bin/drainer.js: the Node version gate', () => {
  it('on Node 20 prints one line naming the versions and exits 1', async () => {
    const r = await run(process.execPath, [BIN, 'demo'], { env: { DRAINER_TEST_NODE_VERSION: 'v20.20.2' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('drainer needs Node.js ≥ 22.18 (24 LTS recommended); this is v20.20.2\n');
  });

  it('lets 22.18, 23.6 and 24 through (and refuses 22.17 and 23.5)', async () => {
    const versions = [
      ['v22.17.9', false],
      ['v22.18.0', true],
      ['v23.5.0', false], // no type stripping by default before 23.6
      ['v23.6.0', true],
      ['v24.1.0', true],
    ] as const;
    // side by side: each passed one loads the whole CLI (2-3 s on a loaded 2-core machine)
    const runs = await Promise.all(
      versions.map(([v]) =>
        run(process.execPath, [BIN, '--version'], { env: { DRAINER_TEST_NODE_VERSION: v } }),
      ),
    );
    versions.forEach(([v, ok], i) => {
      const r = runs[i]!;
      expect(r.code, v).toBe(ok ? 0 : 1);
      if (ok) expect(r.stdout.trim(), v).toMatch(/^\d+\.\d+\.\d+$/);
    });
  });

  it.skipIf(!systemTooOld)('the real old Node of this system gets the same one line', async () => {
    const r = await run(SYSTEM_NODE, [BIN, 'demo']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`drainer needs Node.js ≥ 22.18 (24 LTS recommended); this is ${systemVersion}\n`);
  });

  it("npm test's command starts with the same gate: the real old Node gets the one line, not a TypeScript stack", async () => {
    const test = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { test: string } }
    ).scripts.test;
    const [node, ...args] = test.split(' ');
    expect(node).toBe('node');
    // posed as Node 20 here; on this system's own old Node as well, where it has one
    const posed = await run(process.execPath, args, { env: { DRAINER_TEST_NODE_VERSION: 'v20.20.2' } });
    expect(posed.code).toBe(1);
    expect(posed.stdout).toBe('');
    expect(posed.stderr).toBe('drainer needs Node.js ≥ 22.18 (24 LTS recommended); this is v20.20.2\n');
    if (!systemTooOld) return;
    const old = await run(SYSTEM_NODE, args);
    expect(old.code).toBe(1);
    expect(old.stderr).toBe(`drainer needs Node.js ≥ 22.18 (24 LTS recommended); this is ${systemVersion}\n`);
  });

  it.skipIf(!systemTooOld || !existsSync('/usr/bin/npm'))(
    'npm ci on the old Node fails before installing anything, naming the engines range',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'drainer-npm-ci-'));
      for (const f of ['package.json', 'package-lock.json', '.npmrc'])
        copyFileSync(path.join(ROOT, f), path.join(dir, f));
      const r = await run('/usr/bin/npm', ['ci', '--offline', '--no-audit', '--no-fund'], {
        cwd: dir,
        env: { PATH: '/usr/bin:/bin', HOME: dir },
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/EBADENGINE/);
      expect(r.stderr).toContain('Required: {"node":"^22.18.0 || >=23.6.0"}');
      expect(existsSync(path.join(dir, 'node_modules'))).toBe(false);
    },
  );

  it('package.json, .nvmrc and .node-version agree: engines admit 22.18 and 24, engine-strict on', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(pkg.engines.node).toBe('^22.18.0 || >=23.6.0');
    expect(readFileSync(path.join(ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
    expect(readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim()).toBe('24');
    expect(readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim()).toBe('24');
    // every script that runs drainer goes through the gate
    for (const [name, script] of Object.entries(pkg.scripts))
      expect(script, name).not.toMatch(/src\/cli\.ts/);
    expect(pkg.scripts.demo).toBe('node bin/drainer.js demo');
    expect(pkg.bin).toEqual({ drainer: 'bin/drainer.js', 'kubectl-drainer': 'bin/drainer.js' });
  });
});

describe('bin/drainer.js: a broken install', () => {
  const copy = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-broken-'));
    mkdirSync(path.join(dir, 'bin'));
    copyFileSync(BIN, path.join(dir, 'bin/drainer.js'));
    copyFileSync(path.join(ROOT, 'bin/node-gate.js'), path.join(dir, 'bin/node-gate.js'));
    writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
    return path.join(dir, 'bin/drainer.js');
  };

  it('prints one line and a hint, no stack', async () => {
    const r = await run(process.execPath, [copy(), 'demo']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^drainer could not start: Cannot find module .*src\/cli\.ts/);
    expect(lines[1]).toMatch(/^hint: run "npm ci"/);
  });

  it('prints the stack with --log-level debug', async () => {
    const r = await run(process.execPath, [copy(), 'demo', '--log-level', 'debug']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\n\s+at /);
  });
});

describe('an unexpected error in a command', () => {
  const runWith = async (...argv: string[]) => {
    const stderr = new Capture();
    const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-cli-'));
    const code = await main(['plan', '--node', 'n1', ...argv], {
      io: {
        stdout: new Capture(),
        stderr,
        env: {},
        cwd,
        homeDir: cwd,
        etcDir: cwd,
        hostname: () => 'h',
        signal: new AbortController().signal,
      },
      deps: {
        buildPlugins: () => {
          throw new TypeError('cannot read the plugin list', {
            cause: new Error('EACCES: permission denied'),
          });
        },
      },
    });
    return { code, lines: stderr.text.trimEnd().split('\n') };
  };

  it('is one line with its cause, and a hint', async () => {
    const { code, lines } = await runWith();
    expect(code).toBe(1);
    expect(lines).toEqual([
      'error: cannot read the plugin list (cause: EACCES: permission denied)',
      'hint: an unexpected error; run again with --log-level debug for the stack, and report it',
    ]);
  });

  it('shows the stack with --log-level debug', async () => {
    const { lines } = await runWith('--log-level', 'debug');
    expect(lines[0]).toBe('error: cannot read the plugin list (cause: EACCES: permission denied)');
    expect(lines[1]).toMatch(/^TypeError: cannot read the plugin list/);
    expect(lines.some((l) => /^\s+at /.test(l))).toBe(true);
  });
});
