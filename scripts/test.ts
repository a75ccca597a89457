// `npm test`: the typecheck and the lint run while vitest runs, not before it. Most of vitest's time is
// the sandbox's real time (0.7 of the 2 cores busy on average), and the checks are CPU: run first, they
// added 3.5 min at load 8 (typecheck 44 s, eslint 125 s, prettier 40 s without its cache). The checks
// go one after the other (each alone is CPU bound), at the lowest CPU priority; a failed one is printed
// as soon as it ends and fails the run once vitest is done. Arguments go to vitest:
// `npm test -- test/e2e/gate.test.ts`.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import path from 'node:path';

export interface Step {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

const root = path.dirname(import.meta.dirname);

export const checks: readonly Step[] = [
  { name: 'typecheck', command: 'npm', args: ['run', '--silent', 'typecheck'] },
  { name: 'lint', command: 'npm', args: ['run', '--silent', 'lint'] },
];

export function vitest(args: readonly string[]): Step {
  return {
    name: 'vitest',
    command: process.execPath,
    args: [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', ...args],
  };
}

interface Ended {
  readonly name: string;
  readonly code: number;
  readonly seconds: number;
  readonly output: string;
}

/** Runs one step to its end; `quiet` keeps its output (both streams, in order) for the caller. */
function run(step: Step, quiet: boolean, niceness = 0): Promise<Ended> {
  const started = Date.now();
  const child = spawn(step.command, step.args, {
    cwd: root,
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  // Lowest priority, set before npm starts the check's own processes (they inherit it): the checks take
  // only CPU the tests leave. Beside vitest at normal priority on a loaded machine they pushed kubectl
  // and CLI stories past their timeouts (third-day, demo at load 11).
  if (niceness !== 0 && child.pid !== undefined) {
    try {
      setPriority(child.pid, niceness);
    } catch {
      // already ended: nothing left to lower
    }
  }
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => chunks.push(c));
  child.stderr?.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((done) => {
    const end = (code: number) =>
      done({
        name: step.name,
        code,
        seconds: (Date.now() - started) / 1000,
        output: Buffer.concat(chunks).toString(),
      });
    child.on('error', (e) => {
      chunks.push(Buffer.from(`${e.message}\n`));
      end(127);
    });
    child.on('close', (code) => end(code ?? 1));
  });
}

/**
 * Runs `main` (its output straight through) and, beside it, `checks` one after the other (their output
 * kept and written by `say` only when one fails). Resolves to 0 only when every step passed.
 */
export async function runBeside(
  main: Step,
  checkSteps: readonly Step[],
  say: (text: string) => void,
  niceness = 19,
): Promise<number> {
  const checked = (async () => {
    const ended: Ended[] = [];
    for (const step of checkSteps) {
      const e = await run(step, true, niceness);
      if (e.code !== 0)
        say(
          `\nnpm test: ${e.name} failed (exit ${e.code}); the tests go on, the run fails at their end:\n${e.output}\n`,
        );
      ended.push(e);
    }
    return ended;
  })();
  const tests = await run(main, false);
  const ended = [...(await checked), tests];
  say(
    `npm test: ${ended.map((e) => `${e.name} ${e.code === 0 ? 'passed' : `FAILED (exit ${e.code})`} in ${Math.round(e.seconds)} s`).join(', ')}\n`,
  );
  return ended.every((e) => e.code === 0) ? 0 : 1;
}

// Run as the script, not imported by its test (import.meta.main is not in every Node this supports).
if (path.resolve(process.argv[1] ?? '') === import.meta.filename) {
  process.exitCode = await runBeside(vitest(process.argv.slice(2)), checks, (t) => process.stderr.write(t));
}
