// One soak: the fleet comes up, each step of the schedule runs and the invariants are checked after
// it, then the faults end, every node gets a live agent, the fleet is given a bounded time to settle
// and everything is checked once more. The seed fixes the schedule (Nova's fault RNG has a fixed
// seed of its own); the interleaving with the agents' timers is real time and may differ between runs.
import { Checker, type Finding } from './check.ts';
import { Drains } from './drains.ts';
import { runStep } from './faults.ts';
import { FLEET_NODES, startFleet } from './fleet.ts';
import { Operator } from './operator.ts';
import { countByKind, describeStep, type Step, type StepKind } from './schedule.ts';

export interface SoakOptions {
  readonly seed: number;
  readonly steps: readonly Step[];
  /** Real ms between a step and the check after it. */
  readonly gapMs?: number;
  /** Real ms a healing invariant may stay broken before it counts. */
  readonly graceMs?: number;
  /** Real ms the fleet is given to settle at the end. */
  readonly settleMs?: number;
  /** Stop at the first round with a finding (the shrinker's runs). */
  readonly stopAtFirst?: boolean;
  readonly onRound?: (round: number, step: Step, found: readonly Finding[]) => void;
}

export interface SoakResult {
  readonly seed: number;
  /** The steps that ran (all of them, or up to the first failing one with stopAtFirst). */
  readonly ran: readonly Step[];
  readonly injected: Record<StepKind, number>;
  /** Steps that found nothing to act on (a drain of the node already running). */
  readonly skipped: number;
  readonly findings: readonly Finding[];
  /** The first round with a finding (1-based), if any. */
  readonly firstFailingRound?: number;
  readonly roundsMs: number;
  readonly settleMs: number;
  readonly settled: boolean;
  readonly endState: Checker['endState'];
  /** The concurrent drains: which tool, how many returned 0, and how many of those were overruled by an uncordon. */
  readonly drains: { tool: string; returned: number; succeeded: number; overruled: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(250);
  }
  return false;
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const fleet = await startFleet();
  const drains = new Drains(fleet);
  try {
    for (const node of FLEET_NODES) await fleet.startAgent(node);
    const operator = new Operator(fleet.sandbox.kube.url, fleet.config.fleet.namespace);
    const checker = new Checker(fleet, drains, { graceMs: o.graceMs ?? 20_000 });
    // every agent holds its gate before the first fault
    await until(async () => (await checker.check(0)).length === 0 && (await checker.settled()), 30_000);
    const started = Date.now();
    const ran: Step[] = [];
    const injected: Step[] = [];
    let skipped = 0;
    let firstFailingRound: number | undefined;
    for (const [i, step] of o.steps.entries()) {
      if (await runStep(step, { fleet, operator, drains })) injected.push(step);
      else skipped++;
      ran.push(step);
      await sleep(o.gapMs ?? 250);
      const found = await checker.check(i + 1);
      o.onRound?.(i + 1, step, found);
      if (found.length && firstFailingRound === undefined) firstFailingRound = i + 1;
      if (found.length && o.stopAtFirst) break;
    }
    const roundsMs = Date.now() - started;
    const settleStart = Date.now();
    let settled = false;
    if (!(o.stopAtFirst && firstFailingRound !== undefined)) {
      const nova = fleet.sandbox.openstack.faults;
      nova.errorRate = 0;
      nova.latencyMs = 0;
      for (const node of FLEET_NODES) if (!fleet.agents.get(node)?.length) await fleet.startAgent(node);
      const settleMs = o.settleMs ?? 60_000;
      await drains.settle(settleMs);
      settled = await until(() => checker.settled(), Math.max(0, settleMs - (Date.now() - settleStart)));
      const found = await checker.check(ran.length, true);
      if (found.length && firstFailingRound === undefined) firstFailingRound = ran.length;
    }
    return {
      seed: o.seed,
      ran,
      injected: countByKind(injected),
      skipped,
      findings: checker.findings,
      ...(firstFailingRound !== undefined ? { firstFailingRound } : {}),
      roundsMs,
      settleMs: Date.now() - settleStart,
      settled,
      endState: checker.endState,
      drains: {
        tool: drains.tool,
        returned: drains.returns.length,
        succeeded: drains.returns.filter((d) => d.ok).length,
        overruled: checker.overruledDrains,
      },
    };
  } finally {
    await drains.settle(0);
    await fleet.close();
  }
}

/** A finding as one line. */
export const describeFinding = (f: Finding): string =>
  `[${f.id}] ${f.object}: ${f.evidence} (${f.atEnd ? 'at the end' : f.round ? `after round ${f.round}` : 'before the first round'})`;

export { describeStep };
