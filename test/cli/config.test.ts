import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { cli } from './harness.ts';

describe('drainer config', () => {
  it('prints the effective config as YAML with secrets replaced by [REDACTED]', async () => {
    const run = cli({
      env: {
        OS_AUTH_URL: 'http://k/v3',
        OS_USERNAME: 'admin',
        OS_PASSWORD: 'hunter2',
        DRAINER_NOVA_RETRIES: '4',
      },
      files: { 'config.yaml': 'openstack:\n  auth:\n    applicationCredentialSecret: app-secret-1\n' },
    });

    const { code, stdout } = await run('config');

    expect(code).toBe(0);
    expect(stdout).not.toContain('hunter2');
    expect(stdout).not.toContain('app-secret-1');
    const shown = yaml.load(stdout) as {
      openstack: { auth: Record<string, string> };
      nova: { retries: number };
    };
    expect(shown.openstack.auth).toMatchObject({
      username: 'admin',
      password: '[REDACTED]',
      applicationCredentialSecret: '[REDACTED]',
    });
    expect(shown.nova.retries).toBe(4);
  });

  it('applies the old tool’s flags: -config-path=FILE and -time-out=MINUTES', async () => {
    const run = cli({ files: { 'legacy.yaml': 'Username: nova\n' } });
    const { code, stdout } = await run(
      '-config-path=legacy.yaml',
      '-time-out=5',
      'config',
      '--output',
      'json',
    );
    expect(code).toBe(0);
    const shown = JSON.parse(stdout);
    expect(shown.evacuation.timeout).toBe(300);
    expect(shown.openstack).toMatchObject({ auth: { username: 'nova' }, interface: 'internal' });
  });

  it('exits 2 with one line per problem naming the key path, and no stack trace', async () => {
    const run = cli({
      files: { 'config.yaml': 'nova:\n  maxConcurrentMigrations: 0\ndrain:\n  force: maybe\n' },
    });
    const { code, stderr, stdout } = await run('config');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    const lines = stderr.trim().split('\n').sort();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error: drain\.force: expected true or false, got "maybe"/);
    expect(lines[1]).toMatch(
      /^error: nova\.maxConcurrentMigrations: expected an integer >= 1, got 0 \(in .*config\.yaml\)$/,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 for an explicit config file that does not exist', async () => {
    const { code, stderr } = await cli()('config', '--config-path', 'missing.yaml');
    expect(code).toBe(2);
    expect(stderr).toMatch(/missing\.yaml: config file not found/);
  });

  it('exits 2 from the real binary too, with the key on stderr', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-bin-'));
    writeFileSync(path.join(dir, 'config.yaml'), 'logLevel: loud\n');
    const bin = path.resolve(import.meta.dirname, '../../src/cli.ts');
    const r = spawnSync(process.execPath, [bin, 'config'], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'error: logLevel: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    );
  });
});

describe('drainer usage', () => {
  it('lists every command in --help', async () => {
    const { code, stdout } = await cli()('--help');
    expect(code).toBe(0);
    for (const c of ['daemon', 'run-once', 'restore', 'plan', 'config', 'sandbox', 'demo'])
      expect(stdout).toContain(`drainer ${c}`);
  });

  it('shows a command’s help with the global flags', async () => {
    const { code, stdout } = await cli()('run-once', '--help');
    expect(code).toBe(0);
    for (const f of ['--config-path', '--log-level', '--dry-run', '--node']) expect(stdout).toContain(f);
  });

  it('exits 2 for an unknown command or flag', async () => {
    expect((await cli()('evacuate')).code).toBe(2);
    const bad = await cli()('plan', '--bogus');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Unknown argument: bogus');
  });
});
