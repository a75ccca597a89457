// RELIABILITY.md: what the soaks of one command ran and found (one seed or several), as
// BENCHMARKS.md is for the bench. Written by the command from its own runs; never edited by hand.
import { INVARIANT_IDS } from '../../src/invariants/index.ts';
import { DRAIN_RETURNED_OCCUPIED, NOT_SETTLED } from './check.ts';
import { DRAIN_KIND_TEXT } from './drains.ts';
import { STEP_KINDS, describeStep, type Step } from './schedule.ts';
import { describeFinding, type SoakResult } from './soak.ts';
import { histogramText, tallyDrains, tallyOwners } from './tally.ts';

/** The soak's goal per seed (issue 40): this many judged drains, every kind among them. */
export const JUDGED_GOAL = 100;

export interface Shrunk {
  readonly steps: readonly Step[];
  readonly tries: number;
  readonly complete: boolean;
}

/** One seed's soak, and the shortest failing schedule found for it, if it failed and was shrunk. */
export interface SeedRun {
  readonly result: SoakResult;
  readonly shrunk?: Shrunk;
}

export interface ReportInput {
  readonly runs: readonly SeedRun[];
  readonly rounds: number;
  readonly commit: string;
  readonly command: string;
  readonly machine: string;
  readonly date: Date;
}

const ALL_IDS = [...INVARIANT_IDS, DRAIN_RETURNED_OCCUPIED, NOT_SETTLED];
const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** The seed's summary row: rounds, judged drains, kinds judged, violations, times. */
function summaryRow(result: SoakResult, rounds: number): string {
  const drains = tallyDrains(result.drains.started, result.drains.returns);
  const judgedTotal = drains.reduce((a, d) => a + d.judged, 0);
  const kinds = drains.filter((d) => d.judged > 0).length;
  const perRound = result.ran.length ? result.roundsMs / result.ran.length : 0;
  return `| ${result.seed} | ${result.ran.length} of ${rounds} | ${judgedTotal} | ${kinds} of ${drains.length} | ${result.findings.length} | ${seconds(result.roundsMs)} s | ${seconds(perRound)} s | ${seconds(result.settleMs)} s | ${result.settled ? 'yes' : 'no'} |`;
}

/** One seed's tables: drains by kind, owners' actions, faults, violations, what was found. */
function seedSection({ result, shrunk }: SeedRun): string[] {
  const byId = new Map<string, number>();
  for (const f of result.findings) byId.set(f.id, (byId.get(f.id) ?? 0) + 1);
  const total = result.findings.length;
  const drains = tallyDrains(result.drains.started, result.drains.returns);
  const lines = [
    `## Seed ${result.seed}`,
    '',
    '### Drains, by kind',
    '',
    '| kind | started | returned | success | judged | VMs on the host at each judged return | returned with VMs (violations) | overruled | released | gave up: VMs on the host then |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...drains.map(
      (d) =>
        `| ${DRAIN_KIND_TEXT[d.kind]} | ${d.started} | ${d.returned} | ${d.succeeded} | ${d.judged} | ${histogramText(d.atJudged)} | ${d.occupied} | ${d.overruled} | ${d.released} | ${histogramText(d.atGaveUp)} |`,
    ),
    '',
    `The kubectl kinds ran ${result.drains.tool}. ${result.maintenances} maintenances (drainer records) began.`,
    '',
    '### Owner actions, by kind',
    '',
    '| action | asked | accepted by Nova | refused by Nova (answers) | nothing to act on |',
    '|---|---|---|---|---|',
    ...tallyOwners(result.owners).map(
      (o) =>
        `| ${o.action} | ${o.asked} | ${o.accepted} | ${[...o.refused].map(([code, n]) => `${code} ×${n}`).join(', ') || '—'} | ${o.nothing} |`,
    ),
    '',
    "### Faults and operators' commands, by kind",
    '',
    '| kind | injected |',
    '|---|---|',
    ...STEP_KINDS.map((k) => `| ${k} | ${result.injected[k]} |`),
    `| (skipped: nothing to act on) | ${result.skipped} |`,
    '',
    '### Invariant violations, by id',
    '',
    '| invariant | violations |',
    '|---|---|',
    ...ALL_IDS.map((id) => `| ${id} | ${byId.get(id) ?? 0} |`),
    '',
  ];
  if (total) {
    lines.push('### What was found', '');
    lines.push(...result.findings.slice(0, 30).map((f) => `- ${describeFinding(f)}`));
    if (total > 30) lines.push(`- … and ${total - 30} more`);
    lines.push('');
  }
  if (shrunk) {
    lines.push(
      `### Shortest failing schedule found (${shrunk.steps.length} steps, ${shrunk.tries} tries${shrunk.complete ? '' : ', shrinking stopped at its time limit'})`,
      '',
      ...shrunk.steps.map((s, i) => `${i + 1}. ${describeStep(s)}`),
      '',
    );
  }
  return lines;
}

export function renderReliability(r: ReportInput): string {
  const lines = [
    '# Reliability: the chaos soak',
    '',
    `Written by \`${r.command}\` (bench/chaos/run.ts) on ${r.date.toISOString()} at commit ${r.commit}, on ${r.machine}.`,
    "A seeded schedule of faults, operators' commands and owners' actions runs over a sandbox fleet of 7 nodes × 4 Nova servers and 3 VMIs",
    '(fleet budget 2; names mixed: hv-1 and hv-1-b, two of 80 characters sharing their first 72). Every round that can also starts a drain of',
    "the kind its step names on a node with VMs on it (waiting up to 8 s for one with no drain of its own; three rounds in four not on one drainer's plan would refuse, a `stop` server there without a declared reboot; after 10 rounds refused, that server's owner is asked and picks `live`). drainer's invariants (src/invariants) are checked after every round and once more after the fleet was given time to settle.",
    'Judged: a drain that returned success with its node not back in service meanwhile and no operator release of its gate in that maintenance; the VMs on the host are read at the moment each drain returned.',
    '',
    `| seed | rounds | drains judged (goal ${JUDGED_GOAL}) | kinds judged (goal all) | violations (goal 0) | rounds took | per round | settle took | settled |`,
    '|---|---|---|---|---|---|---|---|---|',
    ...r.runs.map((run) => summaryRow(run.result, r.rounds)),
    '',
    ...r.runs.flatMap(seedSection),
  ];
  lines.push(
    '## How to read it',
    '',
    '- A safety promise (gate disrupted while occupied, a false migration report, an unexpected 4xx, the budget, a drain that returned with VMs on the node) counts the moment it is seen.',
    "- A state that heals (a deleted gate not yet re-created, a NodeMaintenance status not yet written, a killed agent's Lease) counts only if it outlives the grace period, and must be gone after the settle.",
    '- At the end every node must be back in service, or Evacuated with no guest running on it (a server stopped for a declared reboot may stay) (`not-settled` otherwise).',
    '- A drain cycle ends as its tool ends it: kubectl uncordons after the maintenance, kured reboots (the agent is killed and comes back) and uncordons, Karpenter and Cluster API replace the machine (the Node is deleted and registered again).',
    '- A server stopped on a node whose maintenance is a declared reboot (drainer.dev/reboot) may stay: it is listed apart, not as a VM on the host.',
    "- Owners act through Nova's API; a power change is the owner's when the owner asked for it, drainer's otherwise.",
    '- A deleted gate PDB takes its pod with it, as the garbage collector does in a real cluster (the sandbox runs none).',
    "- What the cluster's lifecycle does to what drainer changed (issue 48): a Node deleted and registered again at each phase of its record and right after drainer stopped a server on it (`node-recreate N at=…`); an agent taken off its node by `drainer.dev/agent=disabled` (the DaemonSet's documented affinity) and put back (`agent-off`, `agent-on`: the operator's own findings about that node, a record or VMs with no agent, are left to the operator; `gate-without-keeper` counts where the agent was taken off with nothing on the node); an owner's real resize racing drainer's moves off a host it evacuates (`owner resize-race`); a stopped server moved by its owner onto a host that then goes into maintenance; a VMI made again under its name mid-evacuation; KubeVirt's queue at parallelMigrationsPerCluster 1 while a migration in flight fails.",
    "- The fleet queue is judged first in, first out by the API server's clock (`queue-out-of-order`), from when each node's drainer.dev/queued label and each slot Lease's holder reached the API server; the budget counts records saying Evacuating and live slot Leases together.",
    "- The seed fixes the schedule (Nova's 5xx draws come from the sandbox's own fixed seed); the agents run in real time, so the interleaving can differ between two runs of one seed.",
    '',
  );
  return lines.join('\n');
}
