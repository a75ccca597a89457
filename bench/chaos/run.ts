// `npm run chaos -- --seed N --rounds R` (or --seed 1,2,3: one soak per seed, reported together):
// the chaos soak (bench/chaos/soak.ts). Prints one line per
// finding as it is seen; on a failure, the seed and the shortest schedule found that still fails.
// Writes RELIABILITY.md unless --no-write; --log FILE keeps the agents' log lines; --without K1,K2
// draws no step of those kinds (to see what else fails while one known cause is not yet fixed). --steps FILE replays a schedule (a JSON list of steps, as
// printed after a failure). Shrinking: --shrink-seconds (default 300, 0: none), --shrink-repeats
// (default 2: runs of a shorter schedule before it counts as passing). --parallel runs several seeds
// side by side, one process each (bench/chaos/parallel.ts); --save FILE keeps the runs as JSON. Exit 0:
// no violation; 1: violations; 2: bad input.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SAFETY } from './check.ts';
import { DRAIN_KIND_TEXT } from './drains.ts';
import { renderReliability, type SeedRun } from './report.ts';
import { histogramText, tallyDrains, tallyOwners } from './tally.ts';
import { describeStep, makeSchedule, STEP_KINDS, type Step, type StepKind } from './schedule.ts';
import { FLEET_NODES } from './fleet.ts';
import { replayCommand } from './replay.ts';
import { shrink } from './shrink.ts';
import { runSeedsInParallel } from './parallel.ts';
import { describeFinding, runSoak } from './soak.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function bad(line: string): never {
  process.stderr.write(`chaos: ${line}\n`);
  process.exit(2);
}

function positiveInt(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < 1) bad(`--${name} must be a positive integer, got "${v}"`);
  return Number(v);
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO })
      .toString()
      .trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseArgs({
      options: {
        seed: { type: 'string' },
        rounds: { type: 'string' },
        steps: { type: 'string' },
        'shrink-seconds': { type: 'string' },
        'shrink-repeats': { type: 'string' },
        'no-write': { type: 'boolean' },
        verbose: { type: 'boolean' },
        log: { type: 'string' },
        without: { type: 'string' },
        parallel: { type: 'boolean' },
        save: { type: 'string' },
      },
    }).values;
  } catch (e) {
    bad((e as Error).message);
  }
  // --seed N, or several: --seed 1,2,3 runs one soak per seed and reports them together
  const seeds = (args.seed ?? '1').split(',').map((v) => positiveInt('seed', v, 1));
  const rounds = positiveInt('rounds', args.rounds, 200);
  const shrinkSeconds =
    args['shrink-seconds'] === '0' ? 0 : positiveInt('shrink-seconds', args['shrink-seconds'], 300);
  const repeats = positiveInt('shrink-repeats', args['shrink-repeats'], 2);
  let replay: Step[] | undefined;
  if (args.steps) {
    try {
      replay = JSON.parse(readFileSync(args.steps, 'utf8')) as Step[];
      if (!Array.isArray(replay)) throw new Error('not a list');
    } catch (e) {
      bad(`--steps ${args.steps}: not a JSON list of steps (${(e as Error).message})`);
    }
    if (seeds.length > 1) bad('--steps replays one schedule: give one --seed');
  }

  const without = new Set((args.without ?? '').split(',').filter(Boolean)) as Set<StepKind>;
  for (const k of without)
    if (!STEP_KINDS.includes(k)) bad(`--without ${k}: not a kind of step (${STEP_KINDS.join(', ')})`);
  const runs = await runSeeds(seeds, {
    rounds,
    shrinkSeconds,
    repeats,
    without,
    replay,
    verbose: !!args.verbose,
    parallel: !!args.parallel,
    log: args.log,
  });
  if (args.save) writeFileSync(args.save, JSON.stringify(runs));

  if (!args['no-write'] && !args.steps) {
    const file = path.join(REPO, 'RELIABILITY.md');
    const cpu = cpus();
    writeFileSync(
      file,
      renderReliability({
        runs,
        rounds,
        commit: commit(),
        command: `npm run chaos -- --seed ${seeds.join(',')} --rounds ${rounds}${without.size ? ` --without ${[...without].join(',')}` : ''}${args.parallel && seeds.length > 1 ? ' --parallel' : ''}`,
        machine: `${cpu.length} × ${cpu[0]?.model ?? 'CPU'}, Node ${process.version}`,
        date: new Date(),
      }),
    );
    say(`chaos: wrote ${path.relative(process.cwd(), file) || file}`);
  }
  process.exitCode = runs.some((r) => r.result.findings.length) ? 1 : 0;
}

/** Every seed's soak: one after another, or side by side in child processes (--parallel). */
async function runSeeds(
  seeds: readonly number[],
  o: {
    rounds: number;
    shrinkSeconds: number;
    repeats: number;
    without: ReadonlySet<StepKind>;
    replay: Step[] | undefined;
    verbose: boolean;
    parallel: boolean;
    log: string | undefined;
  },
): Promise<SeedRun[]> {
  const { rounds, shrinkSeconds, repeats, without, verbose, log } = o;
  if (o.parallel && seeds.length > 1) {
    const common = [
      ...[
        '--rounds',
        String(rounds),
        '--shrink-seconds',
        String(shrinkSeconds),
        '--shrink-repeats',
        String(repeats),
      ],
      ...(without.size ? ['--without', [...without].join(',')] : []),
      ...(verbose ? ['--verbose'] : []),
    ];
    return runSeedsInParallel(seeds, { script: fileURLToPath(import.meta.url), common, log });
  }
  const runs: SeedRun[] = [];
  for (const seed of seeds) {
    const steps = o.replay ?? makeSchedule(seed, rounds, FLEET_NODES, without);
    const file = log && seeds.length > 1 ? `${log}.${seed}` : log;
    const replayed = o.replay !== undefined;
    runs.push(
      await soakOne({ seed, steps, rounds, without, replayed, shrinkSeconds, repeats, verbose, log: file }),
    );
  }
  return runs;
}

const say = (line: string) => process.stdout.write(`${line}\n`);

/** One seed's soak, its counts printed, and its first failing round shrunk. */
async function soakOne(o: {
  seed: number;
  steps: Step[];
  rounds: number;
  without: ReadonlySet<StepKind>;
  /** The steps came from --steps: the replay gives them again. */
  replayed: boolean;
  shrinkSeconds: number;
  repeats: number;
  verbose: boolean;
  log: string | undefined;
}): Promise<SeedRun> {
  const { seed, steps, shrinkSeconds, repeats } = o;
  say(`chaos: seed ${seed}, ${steps.length} rounds over ${FLEET_NODES.length} nodes`);
  const result = await runSoak({
    seed,
    steps,
    ...(o.log ? { logFile: o.log } : {}),
    onRound: (round, step, found) => {
      if (o.verbose || round % 20 === 0) say(`round ${round}: ${describeStep(step)}`);
      for (const f of found) say(`  ${describeFinding(f)} ← round ${round}: ${describeStep(step)}`);
    },
  });
  for (const f of result.findings.filter((x) => x.atEnd)) say(`  ${describeFinding(f)}`);
  const perRound = result.ran.length ? result.roundsMs / result.ran.length / 1000 : 0;
  const drains = tallyDrains(result.drains.started, result.drains.returns);
  for (const d of drains)
    say(
      `  ${DRAIN_KIND_TEXT[d.kind]}: ${d.started} started (${d.meanSeconds.toFixed(1)} s to return), ${d.succeeded} succeeded, ${d.judged} judged (VMs on the host: ${histogramText(d.atJudged)}), ${d.overruled} overruled, ${d.released} released, gave up: ${histogramText(d.atGaveUp)}`,
    );
  const owners = tallyOwners(result.owners)
    .map(
      (x) =>
        `${x.action} ${x.accepted}/${x.asked}${x.refused.size ? ` (${[...x.refused].map(([c, n]) => `${c}×${n}`).join(' ')})` : ''}`,
    )
    .join(', ');
  say(`  owners (accepted/asked): ${owners}`);
  say(
    `chaos: seed ${seed}: ${result.ran.length} rounds in ${(result.roundsMs / 1000).toFixed(1)} s (${perRound.toFixed(2)} s per round), settle ${(result.settleMs / 1000).toFixed(1)} s, ${drains.reduce((a, d) => a + d.judged, 0)} drains judged, ${result.findings.length} violation(s)`,
  );
  if (result.firstFailingRound === undefined) return { result };
  // what replays this failure, whatever the shrink finds (or if it is not given the time)
  const whole = o.replayed ? { steps } : { without: o.without };
  say(`chaos: seed ${seed} FAILED; replay: ${replayCommand({ seed, rounds: o.rounds, ...whole })}`);
  if (shrinkSeconds === 0) return { result };
  const ids = new Set(result.findings.filter((f) => f.round === result.firstFailingRound).map((f) => f.id));
  if (ids.size === 0) for (const f of result.findings) ids.add(f.id);
  say(
    `chaos: shrinking the first ${result.firstFailingRound} steps (failing with ${[...ids].join(', ')}), up to ${shrinkSeconds} s`,
  );
  const shrunk = await shrink(
    steps.slice(0, result.firstFailingRound),
    async (candidate) => {
      // a safety finding shows in its round: no settle needed to see it again
      const settleMs = [...ids].every((id) => SAFETY.has(id)) ? 0 : 30_000;
      // the interleaving is real time: a schedule that failed once may pass the next run
      for (let i = 0; i < repeats; i++) {
        const r = await runSoak({ seed, steps: candidate, stopAtFirst: true, settleMs });
        if (r.findings.some((f) => ids.has(f.id))) return true;
      }
      return false;
    },
    { deadline: Date.now() + shrinkSeconds * 1000 },
  );
  say(
    `chaos: seed ${seed} fails; shortest schedule found (${shrunk.steps.length} steps, ${shrunk.tries} tries${shrunk.complete ? '' : ', stopped at its time limit'}):`,
  );
  for (const s of shrunk.steps) say(`  ${describeStep(s)}`);
  say(`  as --steps JSON: ${JSON.stringify(shrunk.steps)}`);
  say(
    `chaos: seed ${seed}: replay the shortest: ${replayCommand({ seed, rounds: o.rounds, steps: shrunk.steps })}`,
  );
  return { result, shrunk };
}

await main();
