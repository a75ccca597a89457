import yargs, { type Argv } from 'yargs';
import { commandTable, lazyCommand } from './commands.ts';
import { type CliDeps, type CliIo, defaultDeps, defaultIo, type CliContext } from './context.ts';
import { normalizeLegacyArgs } from './legacy-args.ts';
import { ExitCode } from '../core/errors.ts';
import { errorLines, wantsStack } from './error-lines.ts';

/** yargs' own complaints (unknown command or option, bad value): the user's to fix. */
class UsageError extends Error {}

/** --log-level as given, read before (or without) yargs' parse. */
function logLevelOf(argv: readonly string[]): string | undefined {
  const i = argv.findIndex((a) => a === '--log-level' || a.startsWith('--log-level='));
  const arg = argv[i];
  if (arg === undefined) return undefined;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[i + 1];
}

export interface MainOptions {
  /** Streams, env, directories and the cancel signal; the process's own by default. */
  io?: Partial<CliIo>;
  deps?: Partial<CliDeps>;
}

/** SIGINT/SIGTERM abort the run once; a second signal ends the process at once. */
function processSignal(): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(130);
    ac.abort(new Error(`received ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: ac.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** The options every command takes (also read by test/docs/commands.test.ts to check the docs). */
export function globalOptions<T>(y: Argv<T>) {
  return y
    .option('config-path', {
      type: 'string',
      describe: 'config file (default ./config.yaml; a missing default file is fine)',
      global: true,
    })
    .option('log-level', {
      type: 'string',
      choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      describe: 'log level (default info)',
      global: true,
    })
    .option('dry-run', { type: 'boolean', describe: 'plan and log, change nothing', global: true })
    .option('node', {
      type: 'string',
      describe: 'node to act on (default $NODE_NAME, else the hostname)',
      global: true,
    })
    .option('evacuation-timeout', {
      type: 'string',
      describe: 'deadline of the whole evacuation, e.g. 45m (the old -time-out=MINUTES maps here)',
      global: true,
    });
}

function parser(deps: Partial<CliDeps>) {
  const p = globalOptions(
    yargs()
      .scriptName('drainer')
      .usage(
        '$0 <command> [options]\n\nEvacuates Nova and KubeVirt VMs by live migration before a node is drained.',
      ),
  )
    .strict()
    .exitProcess(false)
    // yargs' complaints carry a message and no error; errors thrown by a command pass through as they are
    .fail((msg: string | null, err: Error | undefined) => {
      throw err ?? new UsageError(msg ?? 'invalid usage');
    })
    .demandCommand(1, 'name a command (see --help)')
    .recommendCommands()
    .help()
    .alias('help', 'h')
    .wrap(110);
  // each command's module loads only when yargs picks it (commands.ts)
  for (const c of commandTable) p.command(lazyCommand(c, deps));
  return p;
}

/** Runs the CLI and returns the exit code (0 ok, 1 incomplete, 2 bad input). */
export async function main(argv: readonly string[], opts: MainOptions = {}): Promise<number> {
  const own = opts.io?.signal ? undefined : processSignal();
  const io: CliIo = { ...defaultIo(own?.signal ?? (opts.io?.signal as AbortSignal)), ...opts.io };
  const cli: CliContext = { io, deps: { ...defaultDeps, ...opts.deps }, exitCode: ExitCode.ok };
  try {
    let output = '';
    await parser(opts.deps ?? {}).parseAsync(normalizeLegacyArgs(argv), { cli }, (_err, _argv, out) => {
      output += out;
    });
    if (output) io.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
    return cli.exitCode;
  } catch (e) {
    // Our handlers catch their own errors (context.handle): what reaches here is a usage error from
    // yargs, or something unexpected (a module that failed to load): one line and a hint, no stack.
    if (e instanceof UsageError) {
      io.stderr.write(`error: ${e.message}\n`);
      io.stderr.write('run "drainer --help" for usage\n');
      return ExitCode.badInput;
    }
    for (const line of errorLines(e, { stack: wantsStack(logLevelOf(argv)) })) io.stderr.write(`${line}\n`);
    return ExitCode.incomplete;
  } finally {
    own?.dispose();
  }
}
