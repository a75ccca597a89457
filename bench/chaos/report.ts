// RELIABILITY.md: what one soak ran and found, as BENCHMARKS.md is for the bench. Written by the
// command from its own run; never edited by hand.
import { INVARIANT_IDS } from '../../src/invariants/index.ts';
import { DRAIN_RETURNED_OCCUPIED, NOT_SETTLED } from './check.ts';
import { STEP_KINDS, describeStep, type Step } from './schedule.ts';
import { describeFinding, type SoakResult } from './soak.ts';

export interface ReportInput {
  readonly result: SoakResult;
  readonly rounds: number;
  readonly commit: string;
  readonly command: string;
  readonly machine: string;
  readonly date: Date;
  readonly shrunk?: { readonly steps: readonly Step[]; readonly tries: number; readonly complete: boolean };
}

const ALL_IDS = [...INVARIANT_IDS, DRAIN_RETURNED_OCCUPIED, NOT_SETTLED];
const seconds = (ms: number) => (ms / 1000).toFixed(1);

export function renderReliability(r: ReportInput): string {
  const { result } = r;
  const byId = new Map<string, number>();
  for (const f of result.findings) byId.set(f.id, (byId.get(f.id) ?? 0) + 1);
  const total = result.findings.length;
  const perRound = result.ran.length ? result.roundsMs / result.ran.length : 0;
  const lines = [
    '# Reliability: the chaos soak',
    '',
    `Written by \`${r.command}\` (bench/chaos/run.ts) on ${r.date.toISOString()} at commit ${r.commit}, on ${r.machine}.`,
    'A seeded schedule of faults runs over a sandbox fleet of 6 nodes × 4 Nova servers and 3 VMIs (fleet budget 2);',
    "drainer's invariants (src/invariants) are checked after every round and once more after the fleet was given time to settle.",
    '',
    '| seed | rounds | violations (goal 0) | rounds took | per round | settle took | settled |',
    '|---|---|---|---|---|---|---|',
    `| ${result.seed} | ${result.ran.length} of ${r.rounds} | ${total} | ${seconds(result.roundsMs)} s | ${seconds(perRound)} s | ${seconds(result.settleMs)} s | ${result.settled ? 'yes' : 'no'} |`,
    '',
    '## Faults injected, by kind',
    '',
    '| kind | injected |',
    '|---|---|',
    ...STEP_KINDS.map((k) => `| ${k} | ${result.injected[k]} |`),
    `| (skipped: a drain of the node was already running) | ${result.skipped} |`,
    '',
    `Drains (${result.drains.tool}): ${result.drains.returned} returned, ${result.drains.succeeded} of them with success; ` +
      `${result.drains.overruled} of those ran while the soak put their node back in service (an uncordon or the Node registered again), ` +
      'so their return promised nothing and was not judged; every other successful return was checked against Nova and the VMIs.',
    '',
    '## Invariant violations, by id',
    '',
    '| invariant | violations |',
    '|---|---|',
    ...ALL_IDS.map((id) => `| ${id} | ${byId.get(id) ?? 0} |`),
    '',
  ];
  if (total) {
    lines.push('## What was found', '');
    lines.push(...result.findings.slice(0, 40).map((f) => `- ${describeFinding(f)}`));
    if (total > 40) lines.push(`- … and ${total - 40} more`);
    lines.push('');
  }
  if (r.shrunk) {
    lines.push(
      `## Shortest failing schedule found (${r.shrunk.steps.length} steps, ${r.shrunk.tries} tries${r.shrunk.complete ? '' : ', shrinking stopped at its time limit'})`,
      '',
      ...r.shrunk.steps.map((s, i) => `${i + 1}. ${describeStep(s)}`),
      '',
    );
  }
  lines.push(
    '## How to read it',
    '',
    '- A safety promise (gate disrupted while occupied, a false migration report, an unexpected 4xx, the budget, a drain that returned with VMs on the node) counts the moment it is seen.',
    "- A state that heals (a deleted gate not yet re-created, a NodeMaintenance status not yet written, a killed agent's Lease) counts only if it outlives the grace period, and must be gone after the settle.",
    '- At the end every node must be back in service, or Evacuated with nothing left on it (`not-settled` otherwise).',
    '- A deleted gate PDB takes its pod with it, as the garbage collector does in a real cluster (the sandbox runs none).',
    "- The seed fixes the schedule (Nova's 5xx draws come from the sandbox's own fixed seed); the agents run in real time, so the interleaving can differ between two runs of one seed.",
    '',
  );
  return lines.join('\n');
}
