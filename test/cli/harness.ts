import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../src/cli/main.ts';
import type { BackendPlugin } from '../../src/core/backends/plugin.ts';
import type { Config } from '../../src/config/schema.ts';

export class Capture {
  text = '';
  readonly isTTY: boolean;
  readonly columns = 200;
  constructor(isTTY = false) {
    this.isTTY = isTTY;
  }
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The config the plugins were built with (when built). */
  config?: Config;
}

/** Runs main() in-process in a scratch directory with captured output and injected plugins. */
export function cli(
  opts: {
    env?: NodeJS.ProcessEnv;
    files?: Record<string, string>;
    plugins?: BackendPlugin[];
    tty?: boolean;
  } = {},
) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-cli-'));
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(path.join(cwd, name), text);
  return async (...argv: string[]): Promise<RunResult> => {
    const stdout = new Capture(opts.tty);
    const stderr = new Capture();
    const result: Partial<RunResult> = {};
    const code = await main(argv, {
      io: {
        stdout,
        stderr,
        env: opts.env ?? {},
        cwd,
        homeDir: path.join(cwd, 'home'),
        etcDir: path.join(cwd, 'etc'),
        hostname: () => 'this-host',
        signal: new AbortController().signal,
      },
      ...(opts.plugins
        ? {
            deps: {
              buildPlugins: (config: Config) => {
                result.config = config;
                return opts.plugins ?? [];
              },
            },
          }
        : {}),
    });
    return { code, stdout: stdout.text, stderr: stderr.text, ...result };
  };
}
