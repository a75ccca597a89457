// The one command that replays a failing soak, as a failure prints it (and CI with it): the
// shortest failing schedule found, written to a file and given to --steps with the same seed, or
// the seed's whole schedule when nothing was shrunk. No shrink on replay: it shows the failure again.
import type { Step, StepKind } from './schedule.ts';

/** A shell single-quoted word. */
const quoted = (s: string): string => `'${s.split("'").join(`'\\''`)}'`;

export function replayCommand(o: {
  seed: number;
  rounds: number;
  steps?: readonly Step[];
  without?: ReadonlySet<StepKind>;
}): string {
  const tail = '--no-write --shrink-seconds 0';
  if (o.steps) {
    const file = `chaos-steps-${o.seed}.json`;
    return `printf '%s' ${quoted(JSON.stringify(o.steps))} > ${file} && npm run chaos -- --seed ${o.seed} --steps ${file} ${tail}`;
  }
  const without = o.without?.size ? ` --without ${[...o.without].join(',')}` : '';
  return `npm run chaos -- --seed ${o.seed} --rounds ${o.rounds}${without} ${tail}`;
}
