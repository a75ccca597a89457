// Every `drainer …` invocation in README.md and docs/*.md is one the CLI really accepts: its
// command and flags are checked by a strict yargs parser built from the commands' own definitions
// (src/cli/commands.ts and each command module's builder), never from a list kept here.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yargs, { type Argv, type CommandModule } from 'yargs';
import { describe, expect, it } from 'vitest';
import { commandTable } from '../../src/cli/commands.ts';
import { normalizeLegacyArgs } from '../../src/cli/legacy-args.ts';
import { globalOptions } from '../../src/cli/parser.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FILES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/**
 * Flags other branches add at the same time (issue 11's `run-once --no-budget`). Tolerated only while
 * the CLI does not know them yet; once it does they are checked like any other. Remove after the merge.
 */
const PENDING: Readonly<Record<string, readonly string[]>> = {};

interface Invocation {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly args: string[];
}

const INVOCATION = /^(?:\$ )?(?:npx |kubectl )?drainer\s+(.+)$/;

/** The arguments of one invocation: up to a comment or a shell operator; brackets of optional parts dropped. */
function argsOf(rest: string): string[] {
  const cut = rest.split(/\s(?:#|\||&&|;|>|2>)\s?/)[0] ?? '';
  return cut
    .replace(/\\?\|[^\s\]]*/g, '') // alternatives such as `json\|yaml` (a table cell): the first
    .replace(/[[\]]/g, ' ')
    .split(/\s+/)
    .map((a) => a.replace(/^['"]|['"]$/g, ''))
    .filter((a) => a && a !== '…' && a !== '...');
}

function invocations(file: string, text: string): Invocation[] {
  const out: Invocation[] = [];
  let fence: string | undefined; // the open block's language; in a console block only `$ ` lines are commands
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line.startsWith('```')) {
      fence = fence === undefined ? line.slice(3).trim() || 'text' : undefined;
      return;
    }
    if (fence === 'console' && !line.startsWith('$ ')) return;
    const fenced = fence !== undefined;
    const found = (code: string) => {
      const m = INVOCATION.exec(code.trim());
      if (m?.[1] && /^-|^[a-z]/.test(m[1]))
        out.push({ file, line: i + 1, text: code.trim(), args: argsOf(m[1]) });
    };
    if (fenced) found(line);
    else for (const m of line.matchAll(/`([^`]+)`/g)) found(m[1] ?? '');
  });
  return out;
}

/** A strict parser with every real command and flag and no-op handlers (a fresh one per parse: yargs keeps state). */
async function checker(): Promise<Argv> {
  let y: Argv = globalOptions(yargs())
    .strict()
    .exitProcess(false)
    .help()
    .version()
    .fail((msg: string | null, err: Error | undefined) => {
      throw err ?? new Error(msg ?? 'invalid');
    });
  for (const entry of commandTable) {
    const real = (await entry.load()).command as CommandModule;
    y = y.command({ ...real, command: entry.command, handler: async () => undefined });
  }
  return y;
}

async function parses(args: string[]): Promise<string | undefined> {
  try {
    await (await checker()).parseAsync(normalizeLegacyArgs(args), {}, () => undefined);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Why the CLI would refuse these arguments, or undefined when it accepts them. */
async function refusal(args: string[]): Promise<string | undefined> {
  const command = normalizeLegacyArgs(args).find((a) => !a.startsWith('-'));
  const known =
    commandTable.some((c) => c.command.split(' ')[0] === command) ||
    /^--?(help|h|version)$/.test(args[0] ?? '');
  if (!known) return `no command ${command ?? '(none)'}`;
  const error = await parses(args);
  if (!error) return undefined;
  // a flag another branch is adding: accepted while this CLI does not know it yet
  const pending = PENDING[command ?? ''] ?? [];
  const without = args.filter((a) => !pending.includes(a));
  if (without.length < args.length && (await parses(without)) === undefined) return undefined;
  return error;
}

describe('drainer invocations in the docs', () => {
  const all = FILES.flatMap((f) => invocations(f, readFileSync(path.join(ROOT, f), 'utf8')));

  it('finds the invocations (the runbook has many)', () => {
    expect(all.filter((i) => i.file === 'docs/operations.md').length).toBeGreaterThan(8);
    expect(all.some((i) => i.file === 'README.md')).toBe(true);
  });

  it('every one names a real command with real flags', async () => {
    const bad: string[] = [];
    for (const inv of all) {
      const error = await refusal(inv.args);
      if (error) bad.push(`${inv.file}:${inv.line}: ${inv.text}: ${error}`);
    }
    expect(bad).toEqual([]);
  });

  it('the check bites: unknown commands, flags and values are refused', async () => {
    expect(await refusal(['status', '--watch', '-o', 'yaml'])).toBeUndefined();
    expect(await refusal(['restore', '--node', 'node-7'])).toBeUndefined();
    expect(await refusal(['--daemon'])).toBeUndefined(); // the old tool's flag
    expect(await refusal(['status', '--follow'])).toMatch(/Unknown argument/);
    expect(await refusal(['status', '-o', 'xml'])).toMatch(/Invalid values/);
    expect(await refusal(['evacuate'])).toMatch(/no command evacuate/);
    expect(
      invocations(
        'x.md',
        'run `drainer plan [--node N] [--output json]` or\n```sh\n$ drainer status -w  # watch\n```',
      ).map((i) => i.args),
    ).toEqual([
      ['plan', '--node', 'N', '--output', 'json'],
      ['status', '-w'],
    ]);
  });
});
