// drainer's CLI (`node src/cli.ts …`) as an operator runs it from a workstation against the real cluster:
// the kubeconfig they were given, OpenStack credentials of their own (the openrc's OS_*), no config file
// (a fresh directory), and nothing else of this process's environment.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO } from './context.ts';
import { readOpenrc, type RealEnv } from './env.ts';
import type { Run } from './kubectl.ts';

export async function drainerCli(
  env: RealEnv,
  args: readonly string[],
  opts: { kubeconfig?: string; timeoutMs?: number } = {},
): Promise<Run> {
  const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-real-cli-'));
  try {
    return await new Promise<Run>((resolve) =>
      execFile(
        process.execPath,
        [path.join(REPO, 'src/cli.ts'), ...args],
        {
          cwd,
          encoding: 'utf8',
          timeout: opts.timeoutMs ?? 120_000,
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: cwd,
            KUBECONFIG: opts.kubeconfig ?? env.kubeconfig,
            ...readOpenrc(env.openrc),
          },
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      ),
    );
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** For assertion messages: what the command printed. */
export const printed = (r: Run): string => `exit ${r.code}\n${r.stdout}\n${r.stderr}`.slice(-4000);
