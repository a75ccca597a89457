// Runs the real CLI (`node src/cli.ts …`) as an operator would, with only OS_CLOUD and
// OS_CLIENT_CONFIG_FILE naming the cloud (the test process's own OS_* never leak in).
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout + stderr, for "names each server" assertions. */
  output: string;
}

export interface CliOptions {
  cloud: string;
  cloudsFile: string;
  configPath: string;
  home: string;
  /** Working directory: run-once keeps its state file (for restore) under it. */
  cwd: string;
  timeoutMs?: number;
}

export async function runCli(args: readonly string[], opts: CliOptions): Promise<CliResult> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: opts.home, // keeps ~/.config/openstack out of the lookup
    OS_CLOUD: opts.cloud,
    OS_CLIENT_CONFIG_FILE: opts.cloudsFile,
  };
  const cli = join(REPO_ROOT, 'src/cli.ts');
  const child = spawn(process.execPath, [cli, ...args, '--config-path', opts.configPath], {
    cwd: opts.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: opts.timeoutMs ?? 600_000,
    killSignal: 'SIGKILL',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c));
  });
  return { code, stdout, stderr, output: `${stdout}\n${stderr}` };
}

/** For assertion messages: the tail of what the CLI printed. */
export const tail = (r: CliResult, n = 40): string =>
  `exit ${r.code}\n${r.output.split('\n').slice(-n).join('\n')}`;
