import yargs from 'yargs';
import type { CommandModule } from 'yargs';
import { command as configCommand } from './config.ts';
import { command as daemonCommand } from './daemon.ts';
import { command as demoCommand } from './demo.ts';
import { command as planCommand } from './plan.ts';
import { command as restoreCommand } from './restore.ts';
import { command as runOnceCommand } from './run-once.ts';
import { command as sandboxCommand } from './sandbox.ts';
import { normalizeLegacyArgs } from './legacy-args.ts';

const commands: CommandModule<object, never>[] = [
  daemonCommand,
  runOnceCommand,
  restoreCommand,
  planCommand,
  configCommand,
  sandboxCommand,
  demoCommand,
] as CommandModule<object, never>[];

/** Runs the CLI and returns the exit code (0 ok, 1 incomplete, 2 bad input). */
export async function main(argv: readonly string[]): Promise<number> {
  // filled in by the CLI owner: global options, error → exit code mapping
  const parser = yargs(normalizeLegacyArgs(argv)).scriptName('drainer').strict();
  for (const c of commands) parser.command(c);
  await parser.demandCommand(1).help().parseAsync();
  return 0;
}
