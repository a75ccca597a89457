// The CLI's entry: a plain `drainer daemon` (the DaemonSet's) runs without yargs (daemon-args.ts);
// everything else goes through the yargs parser (parser.ts), loaded only then.
import { commandTable, runEntry } from './commands.ts';
import { type CliDeps, type CliIo, defaultDeps, defaultIo, type CliContext } from './context.ts';
import { plainDaemonArgs } from './daemon-args.ts';
import { normalizeLegacyArgs } from './legacy-args.ts';
import { ExitCode } from '../errors.ts';
import { errorLines, wantsStack } from './error-lines.ts';
import { UsageError } from './usage-error.ts';

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
  /** How the user called us, for help and hints: "kubectl drainer" through the kubectl-drainer bin. */
  program?: string;
}

/** The name to show: kubectl runs a plugin as kubectl-<name>, and its user typed "kubectl <name>". */
export function programName(script: string | undefined): string {
  const base = (script ?? '').split(/[\\/]/).pop() ?? '';
  return base.startsWith('kubectl-') ? `kubectl ${base.slice('kubectl-'.length)}` : 'drainer';
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

/** Runs the CLI and returns the exit code (0 ok, 1 incomplete, 2 bad input). */
export async function main(argv: readonly string[], opts: MainOptions = {}): Promise<number> {
  const own = opts.io?.signal ? undefined : processSignal();
  const io: CliIo = { ...defaultIo(own?.signal ?? (opts.io?.signal as AbortSignal)), ...opts.io };
  const cli: CliContext = { io, deps: { ...defaultDeps, ...opts.deps }, exitCode: ExitCode.ok };
  const program = opts.program ?? 'drainer';
  try {
    const args = normalizeLegacyArgs(argv);
    const daemon = plainDaemonArgs(args);
    const entry = commandTable.find((c) => c.command === 'daemon');
    if (daemon && entry) {
      await runEntry(entry, { ...daemon, cli }, opts.deps ?? {});
      return cli.exitCode;
    }
    const { parseAndRun } = await import('./parser.ts');
    const output = await parseAndRun(args, cli, opts.deps ?? {}, program);
    if (output) io.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
    return cli.exitCode;
  } catch (e) {
    // Our handlers catch their own errors (context.handle): what reaches here is a usage error from
    // yargs, or something unexpected (a module that failed to load): one line and a hint, no stack.
    if (e instanceof UsageError) {
      io.stderr.write(`error: ${e.message}\n`);
      io.stderr.write(`run "${program} --help" for usage\n`);
      return ExitCode.badInput;
    }
    for (const line of errorLines(e, { stack: wantsStack(logLevelOf(argv)) })) io.stderr.write(`${line}\n`);
    return ExitCode.incomplete;
  } finally {
    own?.dispose();
  }
}
