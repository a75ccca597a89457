// A plain `drainer daemon …` is parsed without yargs (src/cli/daemon-args.ts). It must read the flags
// exactly as yargs does, and leave everything it does not take to yargs, so help and errors are unchanged.
import { spawnSync } from 'node:child_process';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { plainDaemonArgs } from '../../src/cli/daemon-args.ts';
import { GLOBAL_FLAGS, type GlobalFlags } from '../../src/cli/global-flags.ts';
import { normalizeLegacyArgs } from '../../src/cli/legacy-args.ts';
import { globalOptions } from '../../src/cli/parser.ts';
import { cli } from './harness.ts';

/** What the daemon's handler gets from yargs for these arguments (the global flags only). */
async function viaYargs(args: string[]): Promise<GlobalFlags> {
  let got: Record<string, unknown> = {};
  await globalOptions(yargs())
    .strict()
    .exitProcess(false)
    .fail((msg: string | null, err: Error | undefined) => {
      throw err ?? new Error(msg ?? 'invalid');
    })
    .command('daemon', '', {}, (argv) => {
      got = argv;
    })
    .parseAsync(normalizeLegacyArgs(args));
  const keys = Object.values(GLOBAL_FLAGS).map((f) => f.key);
  return Object.fromEntries(keys.filter((k) => got[k] !== undefined).map((k) => [k, got[k]]));
}

describe('the daemon parsed without yargs', () => {
  it('reads every plain form as yargs does', async () => {
    const cases = [
      ['daemon'],
      ['daemon', '--config-path', '/etc/drainer/config.yaml'],
      ['daemon', '--config-path=/etc/drainer/config.yaml', '--log-level', 'debug'],
      ['daemon', '--log-level=warn', '--dry-run', '--node', 'node-7', '--evacuation-timeout', '45m'],
      ['daemon', '--dry-run', '--node=n 1', '--evacuation-timeout=90'],
      ['--daemon', '--config-path', 'c.yaml'],
      ['-daemon', '-config-path=c.yaml', '-time-out', '30'],
    ];
    for (const args of cases) {
      const plain = plainDaemonArgs(normalizeLegacyArgs(args));
      expect(plain, args.join(' ')).toBeDefined();
      expect(plain, args.join(' ')).toEqual(await viaYargs(args));
    }
  });

  it('leaves help, unknown, repeated, valueless and invalid flags to yargs', () => {
    const cases = [
      ['daemon', '--help'],
      ['daemon', '-h'],
      ['daemon', '--bogus-flag'],
      ['daemon', '--configPath', 'c.yaml'],
      ['daemon', 'extra'],
      ['daemon', '--config-path'],
      ['daemon', '--config-path='],
      ['daemon', '--config-path', '--dry-run'],
      ['daemon', '--node', 'a', '--node', 'b'],
      ['daemon', '--log-level', 'loud'],
      ['daemon', '--dry-run=false'],
      ['daemon', '--', '--dry-run'],
      ['--log-level', 'debug', 'daemon'],
      ['status'],
    ];
    for (const args of cases) expect(plainDaemonArgs(args), args.join(' ')).toBeUndefined();
  });

  it('gives the same clear errors as the other commands for what yargs refuses', async () => {
    const run = cli({ env: { NODE_NAME: 'node-1' } });
    const bogus = await run('daemon', '--bogus-flag');
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toBe('error: unknown flag --bogus-flag\nrun "drainer --help" for usage\n');
    const level = await run('daemon', '--log-level', 'loud');
    expect(level.code).toBe(2);
    expect(level.stderr).toBe(
      'error: invalid --log-level "loud" (choose fatal, error, warn, info, debug, trace, silent)\nrun "drainer --help" for usage\n',
    );
    const help = await run('daemon', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--config-path/);
  });

  it('runs the daemon with the flags it read, through the same handler', async () => {
    const run = cli({ env: {}, files: { 'c.yaml': 'logLevel: debug\n' } });
    // the config file is read (a missing one named by --config-path is an error), then NODE_NAME is missing
    const missing = await run('daemon', '--config-path', 'nope.yaml');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml/);
    const noNode = await run('--daemon', '--config-path=c.yaml', '--dry-run');
    expect(noNode.code).toBe(2);
    expect(noNode.stderr).toMatch(/^error: nodeName: NODE_NAME is required in daemon mode/m);
  });

  it('loads no yargs on that path', () => {
    const hook = `
      import { registerHooks } from 'node:module';
      import { writeSync } from 'node:fs';
      registerHooks({ resolve(s, c, next) { const r = next(s, c); writeSync(2, 'LOADED ' + r.url + '\\n'); return r; } });`;
    const script = `
      const { main } = await import('./src/cli/main.ts');
      const sink = { write() { return true; } };
      const code = await main(['daemon', '--log-level', 'silent'], { io: { stdout: sink, stderr: sink, env: {}, signal: new AbortController().signal } });
      if (code !== 2) throw new Error('expected exit 2 (no NODE_NAME), got ' + code);`;
    const run = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, '--input-type=module', '-e', script],
      { cwd: process.cwd(), encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const urls = run.stderr.split('\n').filter((l) => l.startsWith('LOADED '));
    expect(urls.join('\n')).toMatch(/src\/cli\/daemon\.ts/);
    expect(urls.join('\n')).not.toMatch(/yargs|src\/cli\/parser\.ts/);
  });
});
