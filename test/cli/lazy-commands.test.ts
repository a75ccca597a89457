// `drainer --help` and `drainer sandbox` must start fast: the command table names every command
// without loading its module, and nothing on that path pulls in @kubernetes/client-node.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { commandTable } from '../../src/cli/commands.ts';

// Prints every package the CLI loads for the given arguments (module resolution hook).
const HOOK = `
import { registerHooks } from 'node:module';
import { writeSync } from 'node:fs';
registerHooks({ resolve(s, c, next) { const r = next(s, c); writeSync(2, 'LOADED ' + r.url + '\\n'); return r; } });
`;

// Runs main() with the given arguments (help output discarded) and lists the modules it resolved.
function loaded(args: string[]): string[] {
  const script = `
    const { main } = await import('./src/cli/main.ts');
    const sink = { write() { return true; } };
    await main(${JSON.stringify(args)}, { io: { stdout: sink, stderr: sink, signal: new AbortController().signal } });
  `;
  const run = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(HOOK)}`, '--input-type=module', '-e', script],
    { cwd: process.cwd(), encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
  return run.stderr.split('\n').filter((l) => l.startsWith('LOADED '));
}

describe('lazy command loading', () => {
  it('describes each command exactly as its module does', async () => {
    for (const entry of commandTable) {
      const { command } = (await entry.load()) as { command: { command: string; describe: string } };
      expect(command.command, entry.command).toBe(entry.command);
      expect(command.describe, entry.command).toBe(entry.describe);
    }
  });

  it('--help and `sandbox --help` load neither client-node, got nor prom-client', () => {
    for (const args of [['--help'], ['sandbox', '--help']]) {
      const urls = loaded(args).join('\n');
      expect(urls, args.join(' ')).not.toMatch(/@kubernetes\/client-node|node_modules\/got\/|prom-client/);
      expect(urls).toMatch(/src\/cli\/main\.ts/);
    }
  });
});
