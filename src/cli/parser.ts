// The yargs parser of every command but a plain `drainer daemon` (daemon-args.ts): help, strict
// flags and the usage errors. Each command's module loads only when yargs picks it (commands.ts).
import yargs, { type Argv } from 'yargs';
import { commandTable, lazyCommand } from './commands.ts';
import type { CliContext, CliDeps } from './context.ts';
import { GLOBAL_FLAGS } from './global-flags.ts';
import { UsageError } from './usage-error.ts';

/** The options every command takes (also read by test/docs/commands.test.ts to check the docs). */
export function globalOptions<T>(y: Argv<T>): Argv<T> {
  let out = y;
  for (const [name, f] of Object.entries(GLOBAL_FLAGS))
    out = out.option(name, {
      type: f.type,
      describe: f.describe,
      global: true,
      ...(f.alias ? { alias: f.alias } : {}),
      ...(f.choices ? { choices: [...f.choices] } : {}),
    });
  return out;
}

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * yargs' complaints in our words: a mistyped command is called unknown (yargs only suggests one),
 * and an unknown flag is named once, as typed (yargs adds its camelCase twin).
 */
export function usageText(msg: string, argv: readonly string[]): string {
  const typed = argv.find((a) => !a.startsWith('-'));
  const known = typed !== undefined && commandTable.some((c) => c.command === typed);
  const suggestion = /^Did you mean (.+)\?$/.exec(msg);
  if (suggestion && typed && !known) return `unknown command "${typed}" (did you mean ${suggestion[1]}?)`;
  // yargs says a choice it refuses in three lines; one line names the flag, the value and the choices
  const choice = /Argument: (\S+), Given: (.*), Choices: (.*)$/m.exec(msg);
  if (choice)
    return `invalid ${flagName(choice[1] ?? '')} ${choice[2]} (choose ${choice[3]?.replaceAll('"', '')})`;
  const unknown = /^Unknown arguments?: (.*)$/.exec(msg);
  if (!unknown?.[1]) return msg.replace(/\s*\n\s*/g, ' ');
  const names = unknown[1].split(', ');
  if (typed && !known && names.includes(typed)) return `unknown command "${typed}"`;
  const flags = names.filter((n) => !(n !== kebab(n) && names.includes(kebab(n))));
  const shown = flags.map(flagName).join(', ');
  return `unknown ${flags.length === 1 ? 'flag' : 'flags'} ${shown}`;
}

const flagName = (n: string) => (n.length === 1 ? `-${n}` : `--${n}`);

function parser(deps: Partial<CliDeps>, program: string, argv: readonly string[]) {
  const p = globalOptions(
    yargs()
      .scriptName(program)
      .usage(
        '$0 <command> [options]\n\nEvacuates Nova and KubeVirt VMs by live migration before a node is drained.',
      ),
  )
    .strict()
    .exitProcess(false)
    // yargs' complaints carry a message and no error; errors thrown by a command pass through as they are
    .fail((msg: string | null, err: Error | undefined) => {
      throw err ?? new UsageError(usageText(msg ?? 'invalid usage', argv));
    })
    .demandCommand(1, 'name a command (see --help)')
    .recommendCommands()
    .help()
    .alias('help', 'h')
    .wrap(110);
  for (const c of commandTable) p.command(lazyCommand(c, deps));
  return p;
}

/** Parses and runs the command; returns what yargs printed (help, version). */
export async function parseAndRun(
  argv: readonly string[],
  cli: CliContext,
  deps: Partial<CliDeps>,
  program = 'drainer',
): Promise<string> {
  let output = '';
  await parser(deps, program, argv).parseAsync([...argv], { cli }, (_err, _argv, out) => {
    output += out;
  });
  return output;
}
