// CLI runs for a test file: a temp dir with clouds.yaml (the admin cloud as "drainer-ft", plus any
// cloud a test adds) and one drainer config per run.
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, beforeEach } from 'vitest';
import type { CloudEnv } from './cloud-env.ts';
import { runCli, type CliResult } from './cli.ts';
import { novaOnlyConfig, RunDir } from './run-dir.ts';
import type { World } from './world.ts';

export const ADMIN_CLOUD = 'drainer-ft';

export interface CliRunOptions {
  /** nova: settings merged over the suite's defaults (short polls). */
  nova?: Record<string, unknown>;
  /** evacuation: settings (e.g. capacityCheck). */
  evacuation?: Record<string, unknown>;
  /** Cloud name in the per-run clouds.yaml (default: the admin cloud). */
  cloud?: string;
}

export interface CliWorld {
  dir: RunDir;
  /** Adds (or replaces) a cloud in the per-run clouds.yaml. */
  addCloud(name: string, cloud: CloudEnv): Promise<void>;
  drainer(args: readonly string[], opts?: CliRunOptions): Promise<CliResult>;
}

export function useCli(world: () => World): () => CliWorld {
  let cli: CliWorld | undefined;
  let cwd = '';
  beforeAll(async () => {
    const w = world();
    const dir = await RunDir.create(w.suiteCleanup);
    const clouds: Record<string, CloudEnv> = { [ADMIN_CLOUD]: w.cloud };
    await dir.writeClouds(clouds);
    let runs = 0;
    cwd = dir.path;
    cli = {
      dir,
      addCloud: async (name, cloud) => {
        clouds[name] = cloud;
        await dir.writeClouds(clouds);
      },
      drainer: async (args, opts = {}) => {
        runs += 1;
        const configPath = await dir.writeConfig(
          `config-${runs}`,
          novaOnlyConfig(opts.nova, opts.evacuation),
        );
        return runCli(args, {
          cloud: opts.cloud ?? ADMIN_CLOUD,
          cloudsFile: dir.cloudsFile,
          configPath,
          home: dir.path,
          cwd,
        });
      },
    };
  });
  // a fresh working directory per test: run-once's state file (what restore undoes) never leaks
  // from one test into the next
  beforeEach(async () => {
    if (cli) cwd = await mkdtemp(join(cli.dir.path, 'cwd-'));
  });
  return () => {
    if (!cli) throw new Error('the CLI world is not set up');
    return cli;
  };
}
