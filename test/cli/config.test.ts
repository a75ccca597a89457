import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

  it('exits 2 for an unknown command or flag, saying which', async () => {
    const evacuate = await cli()('evacuate');
    expect(evacuate.code).toBe(2);
    expect(evacuate.stderr).toBe('error: unknown command "evacuate"\nrun "drainer --help" for usage\n');
    const typo = await cli()('statsu');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      'error: unknown command "statsu" (did you mean status?)\nrun "drainer --help" for usage\n',
    );
    const bad = await cli()('plan', '--bogus');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: unknown flag --bogus\n');
    // yargs names a mistyped flag twice (config-pat, configPat): we name it once, as typed
    const twice = await cli()('plan', '--config-pat', 'x.yaml');
    expect(twice.stderr).toBe('error: unknown flag --config-pat\nrun "drainer --help" for usage\n');
  });

  it('names a refused choice in one line: the flag, the value and the choices', async () => {
    const xml = await cli()('status', '-o', 'xml');
    expect(xml.code).toBe(2);
    expect(xml.stderr).toBe(
      'error: invalid --output "xml" (choose table, wide, json, yaml)\nrun "drainer --help" for usage\n',
    );
  });

  it("reports a bad -time-out against the old tool's flag the user typed", async () => {
    const bad = await cli()('plan', '-time-out=abc');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'error: -time-out: expected a number of minutes, got "abc"\nrun "drainer --help" for usage\n',
    );
    expect(bad.stderr).not.toContain('evacuation-timeout');
  });

  it('prints its version with --version (the package version)', async () => {
    const { code, stdout } = await cli()('--version');
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
    );
  });
});
