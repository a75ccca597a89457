// `npm run chaos -- --seed 1,2,3 --parallel`: one child process per seed, side by side. A soak mostly
// waits (its rounds pace real time, its drains wait on evacuations), so three at once take about as
// long as one; each child saves its run as JSON and the parent reports them together.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SeedRun } from './report.ts';

/** The flags a child gets besides its own --seed, --save and --log (--no-write: the parent writes). */
export interface ChildArgs {
  readonly script: string;
  /** The parent's flags that every child repeats (--rounds, --shrink-seconds, --without …). */
  readonly common: readonly string[];
  /** The parent's --log: each child keeps its lines in `<log>.<seed>`. */
  readonly log?: string | undefined;
}

/** Runs every seed at once; each child's lines are printed as they come, prefixed with its seed. */
export async function runSeedsInParallel(seeds: readonly number[], o: ChildArgs): Promise<SeedRun[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-chaos-'));
  try {
    const saved = await Promise.all(seeds.map((seed) => runChild(seed, dir, o)));
    return saved.map((file) => (JSON.parse(readFileSync(file, 'utf8')) as SeedRun[])[0]!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runChild(seed: number, dir: string, o: ChildArgs): Promise<string> {
  const save = path.join(dir, `seed-${seed}.json`);
  const args = [
    ...process.execArgv,
    o.script,
    '--seed',
    String(seed),
    '--no-write',
    '--save',
    save,
    ...(o.log ? ['--log', `${o.log}.${seed}`] : []),
    ...o.common,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let rest = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) process.stdout.write(`[seed ${seed}] ${line}\n`);
    });
    child.on('error', reject);
    // exit 1 is a soak with findings (saved all the same); anything else did not run to its end
    child.on('close', (code) => {
      if (rest) process.stdout.write(`[seed ${seed}] ${rest}\n`);
      if (code === 0 || code === 1) resolve(save);
      else reject(new Error(`the soak of seed ${seed} ended with exit ${code}`));
    });
  });
}
